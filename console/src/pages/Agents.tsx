import { useEffect, useState } from 'react';
import { useMutation, useQuery } from 'urql';
import type { CombinedError } from '@urql/core';
import { graphql } from '../gql';
import { words } from '../format';
import { ErrorNote } from '../parts/ErrorNote';

const AgentsQuery = graphql(`
  query ConsoleAgents {
    agents(first: 100) {
      edges {
        node {
          id
          name
          status
          version
          primaryPhoneNumber {
            number
          }
          template {
            name
          }
          provisioning {
            state
            error
            version
          }
        }
      }
    }
    agentTemplates {
      id
      name
      description
      isActive
    }
  }
`);

const Retry = graphql(`
  mutation ConsoleRetryAgentProvisioning($id: UUID!) {
    retryAgentProvisioning(id: $id) {
      id
      provisioning {
        state
        error
        version
      }
    }
  }
`);

/**
 * How often the list is read again while an agent's provisioning is pending: the API has no
 * subscription for agents, and provisioning takes seconds at a real provider.
 */
const PENDING_REFRESH_MS = 2000;

export function Agents() {
  const [result, refetch] = useQuery({ query: AgentsQuery, requestPolicy: 'cache-and-network' });
  const [, retry] = useMutation(Retry);
  const [retryError, setRetryError] = useState<CombinedError>();
  const agents = result.data?.agents.edges.map((e) => e.node) ?? [];
  const templates = result.data?.agentTemplates.filter((t) => t.isActive) ?? [];
  const pending = agents.some((a) => a.provisioning.state === 'pending');
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(() => refetch({ requestPolicy: 'network-only' }), PENDING_REFRESH_MS);
    return () => clearInterval(timer);
  }, [pending, refetch]);

  return (
    <>
      <h1>Agents</h1>
      <ErrorNote error={result.error ?? retryError} />
      <div className="table-scroll">
        <table aria-label="Agents">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Template</th>
              <th scope="col">Number</th>
              <th scope="col">Status</th>
              <th scope="col">Provisioning</th>
            </tr>
          </thead>
          <tbody>
            {agents.map((a) => (
              <tr key={a.id}>
                <th scope="row">{a.name}</th>
                <td>{a.template.name}</td>
                <td>{a.primaryPhoneNumber?.number ?? '—'}</td>
                <td>{words(a.status)}</td>
                <td data-testid="provisioning" aria-live="polite">
                  {words(a.provisioning.state)}
                  {a.provisioning.state === 'ready' ? ` (version ${a.provisioning.version ?? a.version})` : null}
                  {a.provisioning.error ? `: ${a.provisioning.error}` : null}
                  {a.provisioning.state === 'failed' ? (
                    <>
                      {' '}
                      <button
                        type="button"
                        className="secondary"
                        aria-label={`Retry provisioning ${a.name}`}
                        onClick={async () => {
                          const retried = await retry({ id: a.id });
                          setRetryError(retried.error);
                          refetch({ requestPolicy: 'network-only' });
                        }}
                      >
                        Retry
                      </button>
                    </>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {result.data && !agents.length ? <p>No agent yet: start from a template below.</p> : null}
      <h2>Templates</h2>
      <ul className="cards" aria-label="Agent templates">
        {templates.map((t) => (
          <li key={t.id} className="card">
            <h3>{t.name}</h3>
            <p>{t.description}</p>
            <a className="button" href={`#/agents/new/${t.id}`} aria-label={`Create an agent from ${t.name}`}>
              Create an agent
            </a>
          </li>
        ))}
      </ul>
    </>
  );
}
