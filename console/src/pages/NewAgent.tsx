import { type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql';
import { ErrorNote } from '../parts/ErrorNote';
import { SchemaFields, schemaValues, type JsonSchema } from '../parts/SchemaFields';
import { go } from '../router';

const Template = graphql(`
  query ConsoleAgentTemplate($id: UUID!) {
    agentTemplate(id: $id) {
      id
      name
      description
      placeholderSchema
    }
  }
`);

const Create = graphql(`
  mutation ConsoleCreateAgent($input: CreateAgentInput!) {
    createAgent(input: $input) {
      id
      provisioning {
        state
      }
    }
  }
`);

const PLACEHOLDER = 'placeholder-';

export function NewAgent({ templateId }: { templateId: string | undefined }) {
  const [template] = useQuery({ query: Template, variables: { id: templateId ?? '' }, pause: !templateId });
  const [created, create] = useMutation(Create);
  const found = template.data?.agentTemplate;
  if (!templateId)
    return (
      <p>
        Choose a template on the <a href="#/agents">agents page</a>.
      </p>
    );
  if (template.error) return <ErrorNote error={template.error} />;
  if (!found) return template.fetching ? <p>Loading…</p> : <h1>Template not found</h1>;
  const schema = found.placeholderSchema as JsonSchema;

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const text = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    const result = await create({
      input: {
        templateId: found.id,
        name: text('agent-name'),
        phoneNumber: text('agent-phone'),
        variables: schemaValues(schema, form, PLACEHOLDER),
      },
    });
    if (result.data) go('/agents');
  };

  return (
    <>
      <p className="crumbs">
        <a href="#/agents">Agents</a>
      </p>
      <h1>New agent: {found.name}</h1>
      <p>{found.description}</p>
      <form className="form" onSubmit={submit}>
        <label htmlFor="agent-name">Agent’s name in the console</label>
        <input id="agent-name" name="agent-name" required maxLength={200} />
        <label htmlFor="agent-phone">Phone number it calls from (E.164, like +14155550100)</label>
        <input id="agent-phone" name="agent-phone" required inputMode="tel" />
        <fieldset>
          <legend>What the template needs</legend>
          <SchemaFields schema={schema} prefix={PLACEHOLDER} />
        </fieldset>
        <ErrorNote error={created.error} />
        <div className="actions">
          <button type="submit" disabled={created.fetching}>
            Create agent
          </button>
        </div>
      </form>
    </>
  );
}
