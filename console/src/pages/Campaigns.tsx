import { useEffect } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../gql';
import { ErrorNote } from '../parts/ErrorNote';
import { Progress } from '../parts/Progress';
import { CampaignActions } from '../parts/CampaignActions';
import { words } from '../format';

export const CampaignsListQuery = graphql(`
  query ConsoleCampaigns {
    campaigns(first: 100) {
      totalCount
      edges {
        node {
          id
          name
          status
          pausedReason
          agent {
            id
            name
          }
          contactGroup {
            id
            name
          }
          progress {
            ...ProgressCounts
          }
        }
      }
    }
  }
`);

/** How often the list reads the campaigns again: one subscription per row would take the browser's connections. */
const REFRESH_MS = 3000;

export function Campaigns() {
  const [result, refetch] = useQuery({ query: CampaignsListQuery });
  useEffect(() => {
    const timer = setInterval(() => refetch({ requestPolicy: 'network-only' }), REFRESH_MS);
    return () => clearInterval(timer);
  }, [refetch]);
  const campaigns = result.data?.campaigns.edges.map((e) => e.node) ?? [];
  return (
    <>
      <div className="title">
        <h1>Campaigns</h1>
        <a className="button" href="#/campaigns/new">
          New campaign
        </a>
      </div>
      <ErrorNote error={result.error} />
      {result.data && !campaigns.length ? <p>No campaign yet: import contacts, create an agent, then a campaign.</p> : null}
      <ul className="cards" aria-label="Campaigns">
        {campaigns.map((c) => (
          <li key={c.id} className="card">
            <h2>
              <a href={`#/campaigns/${c.id}`}>{c.name}</a>
            </h2>
            <p>
              <span className={`status status-${c.status}`}>{words(c.status)}</span>
              {c.pausedReason ? ` (${words(c.pausedReason)})` : null} · {c.agent.name} · {c.contactGroup.name}
            </p>
            <Progress progress={c.progress} />
            <CampaignActions campaign={c} onDone={() => refetch({ requestPolicy: 'network-only' })} />
          </li>
        ))}
      </ul>
    </>
  );
}
