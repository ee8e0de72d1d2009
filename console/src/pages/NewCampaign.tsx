import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql';
import { ErrorNote } from '../parts/ErrorNote';
import { go } from '../router';

const Choices = graphql(`
  query ConsoleCampaignChoices {
    agents(first: 100, status: active) {
      edges {
        node {
          id
          name
        }
      }
    }
    contactGroups(first: 100) {
      edges {
        node {
          id
          name
          total
        }
      }
    }
  }
`);

const Create = graphql(`
  mutation ConsoleCreateCampaign($input: CreateCampaignInput!) {
    createCampaign(input: $input) {
      id
    }
  }
`);

const SetVariants = graphql(`
  mutation ConsoleSetCampaignVariants($id: UUID!, $input: SetCampaignVariantsInput!) {
    setCampaignVariants(id: $id, input: $input) {
      id
    }
  }
`);

/** The API's bounds of an A/B split: two to ten variants. */
const MIN_VARIANTS = 2;
const MAX_VARIANTS = 10;

interface Variant {
  key: number;
  name: string;
  agentId: string;
  weight: string;
}

const DAYS = [
  ['mon', 'Mon'],
  ['tue', 'Tue'],
  ['wed', 'Wed'],
  ['thu', 'Thu'],
  ['fri', 'Fri'],
  ['sat', 'Sat'],
  ['sun', 'Sun'],
] as const;
type Day = (typeof DAYS)[number][0];

export function NewCampaign() {
  const [choices] = useQuery({ query: Choices });
  const [created, create] = useMutation(Create);
  const [split, saveSplit] = useMutation(SetVariants);
  const [days, setDays] = useState<Set<Day>>(new Set(['mon', 'tue', 'wed', 'thu', 'fri']));
  const [variants, setVariants] = useState<Variant[] | null>(null);
  // The API sets a split on a campaign that exists: when the split is refused, the draft stays, and
  // submitting again sets the split alone rather than creating a second campaign.
  const [draftId, setDraftId] = useState<string>();

  const agents = choices.data?.agents.edges.map((e) => e.node) ?? [];
  const newVariant = (index: number, key: number): Variant => ({
    key,
    name: String.fromCharCode(65 + index),
    agentId: agents[index % Math.max(agents.length, 1)]?.id ?? '',
    weight: '50',
  });
  const changeVariant = (key: number, change: Partial<Variant>) =>
    setVariants((current) => current && current.map((v) => (v.key === key ? { ...v, ...change } : v)));

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    let id = draftId;
    if (!id) {
      const result = await create({
        input: {
          name: text('name'),
          // With a split each contact gets a variant's agent; the campaign's own is the first variant's.
          agentId: variants ? variants[0]!.agentId : text('agentId'),
          contactGroupId: text('contactGroupId'),
          timezone: text('timezone'),
          callingHours: { start: text('start'), end: text('end') },
          activeDays: [...days],
          concurrentCalls: Number(text('concurrentCalls')),
          regionalRules: form.get('regionalRules') === 'on',
        },
      });
      id = result.data?.createCampaign.id;
      if (!id) return;
    }
    if (variants) {
      const result = await saveSplit({
        id,
        input: { variants: variants.map((v) => ({ name: v.name.trim(), agentId: v.agentId, weight: Number(v.weight) })) },
      });
      if (result.error) {
        setDraftId(id);
        return;
      }
    }
    go(`/campaigns/${id}`);
  };

  const groups = choices.data?.contactGroups.edges.map((e) => e.node) ?? [];
  return (
    <>
      <p className="crumbs">
        <a href="#/campaigns">Campaigns</a>
      </p>
      <h1>New campaign</h1>
      <ErrorNote error={choices.error} />
      <form className="form" onSubmit={submit}>
        <label htmlFor="name">Name</label>
        <input id="name" name="name" required maxLength={200} />
        {variants ? null : (
          <>
            <label htmlFor="agentId">Agent</label>
            <select id="agentId" name="agentId" required>
              {agents.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name}
                </option>
              ))}
            </select>
          </>
        )}
        {choices.data && !agents.length ? (
          <p className="hint">
            No active agent: <a href="#/agents">create one</a> first.
          </p>
        ) : null}
        <label htmlFor="contactGroupId">Contact group</label>
        <select id="contactGroupId" name="contactGroupId" required>
          {groups.map((g) => (
            <option key={g.id} value={g.id}>
              {g.name} ({g.total})
            </option>
          ))}
        </select>
        <label htmlFor="timezone">Time zone of the calling hours</label>
        <input id="timezone" name="timezone" required defaultValue={Intl.DateTimeFormat().resolvedOptions().timeZone} />
        <fieldset>
          <legend>Calling hours (HH:MM, 24:00 for midnight)</legend>
          <label htmlFor="start">From</label>
          <input id="start" name="start" required pattern="\d{2}:\d{2}" defaultValue="09:00" inputMode="numeric" />
          <label htmlFor="end">To</label>
          <input id="end" name="end" required pattern="\d{2}:\d{2}" defaultValue="17:00" inputMode="numeric" />
        </fieldset>
        <fieldset>
          <legend>Days</legend>
          <div className="days">
            {DAYS.map(([day, label]) => (
              <label key={day} className="check">
                <input
                  type="checkbox"
                  checked={days.has(day)}
                  onChange={(e) => {
                    const next = new Set(days);
                    if (e.target.checked) next.add(day);
                    else next.delete(day);
                    setDays(next);
                  }}
                />
                {label}
              </label>
            ))}
          </div>
        </fieldset>
        <label htmlFor="concurrentCalls">Calls at once</label>
        <input id="concurrentCalls" name="concurrentCalls" type="number" min={1} max={100} defaultValue={3} required />
        <label className="check">
          <input type="checkbox" name="regionalRules" defaultChecked /> Regional calling rules (legal hours and days in the callee’s region;
          turning them off needs an administrator’s exemption)
        </label>
        <fieldset>
          <legend>A/B test</legend>
          <label className="check">
            <input
              type="checkbox"
              checked={!!variants}
              disabled={!!draftId}
              onChange={(e) => setVariants(e.target.checked ? [newVariant(0, 0), newVariant(1, 1)] : null)}
            />
            Split the contacts between agents: each contact is given one variant, by weight, the same on every call
          </label>
          {variants?.map((v, index) => (
            <div key={v.key} className="variant" role="group" aria-label={`Variant ${index + 1}`}>
              <label htmlFor={`variant-${v.key}-name`}>Variant {index + 1} name</label>
              <input
                id={`variant-${v.key}-name`}
                value={v.name}
                onChange={(e) => changeVariant(v.key, { name: e.target.value })}
                required
                maxLength={64}
              />
              <label htmlFor={`variant-${v.key}-agent`}>Variant {index + 1} agent</label>
              <select
                id={`variant-${v.key}-agent`}
                value={v.agentId}
                onChange={(e) => changeVariant(v.key, { agentId: e.target.value })}
                required
              >
                {agents.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.name}
                  </option>
                ))}
              </select>
              <label htmlFor={`variant-${v.key}-weight`}>Variant {index + 1} weight (1 to 100)</label>
              <input
                id={`variant-${v.key}-weight`}
                type="number"
                min={1}
                max={100}
                step={1}
                value={v.weight}
                onChange={(e) => changeVariant(v.key, { weight: e.target.value })}
                required
              />
              {variants.length > MIN_VARIANTS ? (
                <button type="button" className="secondary" onClick={() => setVariants(variants.filter((x) => x.key !== v.key))}>
                  Remove variant {index + 1}
                </button>
              ) : null}
            </div>
          ))}
          {variants && variants.length < MAX_VARIANTS ? (
            <div className="actions">
              <button
                type="button"
                className="secondary"
                onClick={() => setVariants([...variants, newVariant(variants.length, Math.max(...variants.map((v) => v.key)) + 1)])}
              >
                Add a variant
              </button>
            </div>
          ) : null}
        </fieldset>
        <ErrorNote error={created.error ?? split.error} />
        {draftId ? (
          <p className="error">
            The campaign was created as a draft, without its A/B split: correct the split and press the button again, or{' '}
            <a href={`#/campaigns/${draftId}`}>open the campaign</a>.
          </p>
        ) : null}
        <div className="actions">
          <button type="submit" disabled={created.fetching || split.fetching}>
            {draftId ? 'Set the A/B split' : 'Create campaign'}
          </button>
        </div>
      </form>
    </>
  );
}
