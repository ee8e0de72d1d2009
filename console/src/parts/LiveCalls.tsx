import { useMemo, useState } from 'react';
import { useQuery, useSubscription } from 'urql';
import { graphql } from '../gql';
import { words } from '../format';
import { Chart } from './Chart';
import { ErrorNote } from './ErrorNote';

const AttemptsSoFar = graphql(`
  query ConsoleCampaignAttempts($campaignId: UUID!) {
    callAttempts(campaignId: $campaignId, first: 500) {
      edges {
        node {
          id
          status
          outcome
          createdAt
          endedAt
        }
      }
    }
  }
`);

const AttemptLive = graphql(`
  subscription ConsoleCallAttemptLive($campaignId: UUID!) {
    callAttemptUpdated(campaignId: $campaignId) {
      id
      status
      outcome
      createdAt
      endedAt
    }
  }
`);

interface Attempt {
  id: string;
  status: string;
  outcome?: string | null;
  createdAt: string;
  endedAt?: string | null;
}

const minuteOf = (iso: string) => new Date(iso).toISOString().slice(11, 16);

/**
 * Calls per minute by outcome: the calls made so far, then each call as the server streams it
 * (callAttemptUpdated), placed in the minute it ended (or began, while it lasts).
 */
export function LiveCalls({ campaignId, onCall }: { campaignId: string; onCall?: () => void }) {
  const [past] = useQuery({ query: AttemptsSoFar, variables: { campaignId }, requestPolicy: 'network-only' });
  const [streamed, setStreamed] = useState<Map<string, Attempt>>(new Map());
  const [sub] = useSubscription({ query: AttemptLive, variables: { campaignId } }, (_previous: unknown, event) => {
    setStreamed((current) => new Map(current).set(event.callAttemptUpdated.id, event.callAttemptUpdated));
    onCall?.();
    return event;
  });

  const { rows, series, total } = useMemo(() => {
    const attempts = new Map<string, Attempt>();
    for (const { node } of past.data?.callAttempts.edges ?? []) attempts.set(node.id, node);
    for (const [id, attempt] of streamed) attempts.set(id, attempt);
    const byMinute = new Map<string, Record<string, number | string>>();
    const outcomes = new Set<string>();
    for (const a of attempts.values()) {
      const minute = minuteOf(a.endedAt ?? a.createdAt);
      const outcome = a.outcome ?? (a.endedAt ? a.status : 'in_call');
      outcomes.add(outcome);
      const row = byMinute.get(minute) ?? { minute };
      row[outcome] = ((row[outcome] as number | undefined) ?? 0) + 1;
      byMinute.set(minute, row);
    }
    return {
      rows: [...byMinute.values()].sort((a, b) => String(a['minute']).localeCompare(String(b['minute']))),
      series: [...outcomes].sort().map((key) => ({ key, label: words(key) })),
      total: attempts.size,
    };
  }, [past.data, streamed]);

  return (
    <>
      <ErrorNote error={past.error ?? sub.error} />
      <p aria-live="polite" data-testid="live-count">
        {total} {total === 1 ? 'call' : 'calls'} so far{streamed.size ? ` (${streamed.size} updated live)` : ''}.
      </p>
      <Chart id="calls-per-minute" title="Calls per minute (UTC) by outcome" rows={rows} categoryKey="minute" series={series} />
    </>
  );
}
