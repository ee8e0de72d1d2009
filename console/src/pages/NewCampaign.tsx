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
  const [days, setDays] = useState<Set<Day>>(new Set(['mon', 'tue', 'wed', 'thu', 'fri']));

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const result = await create({
      input: {
        name: text('name'),
        agentId: text('agentId'),
        contactGroupId: text('contactGroupId'),
        timezone: text('timezone'),
        callingHours: { start: text('start'), end: text('end') },
        activeDays: [...days],
        concurrentCalls: Number(text('concurrentCalls')),
        regionalRules: form.get('regionalRules') === 'on',
      },
    });
    if (result.data) go(`/campaigns/${result.data.createCampaign.id}`);
  };

  const agents = choices.data?.agents.edges.map((e) => e.node) ?? [];
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
        <label htmlFor="agentId">Agent</label>
        <select id="agentId" name="agentId" required>
          {agents.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </select>
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
        <ErrorNote error={created.error} />
        <div className="actions">
          <button type="submit" disabled={created.fetching}>
            Create campaign
          </button>
        </div>
      </form>
    </>
  );
}
