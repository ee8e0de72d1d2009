import { parseEvent } from '../test/support/sse.js';
import type { Customer } from './workload.js';

// GraphQL subscriptions held open through the run, as a dashboard holds them: campaignUpdated over SSE,
// first on an API instance directly (half on each), and after a cut, reconnected through the load
// balancer. The checker compares each one's last event with the campaign's final state.

export interface CampaignState {
  status: string;
  done: number;
  total: number;
}

export interface Watcher {
  campaignId: string;
  /** The instance it opened on first. */
  firstServer: string;
  events: number;
  /** Streams that ended without `complete` (an instance killed, a connection cut). */
  cuts: number;
  reconnects: number;
  /** GraphQL errors a `next` event carried, and refused (re)connections. */
  errors: string[];
  last: CampaignState | undefined;
  lastAt: number;
}

const SUBSCRIPTION = 'subscription($id: UUID!) { campaignUpdated(id: $id) { status progress { total done } } }';

/** Reads one stream to its end: completed by the server, cut after it opened, or refused. */
async function follow(url: string, customer: Customer, watcher: Watcher, stop: AbortSignal): Promise<'completed' | 'cut' | 'refused'> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${customer.token}` },
    body: JSON.stringify({ query: SUBSCRIPTION, variables: { id: watcher.campaignId } }),
    signal: stop,
  });
  if (response.status !== 200) {
    watcher.errors.push(`HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`);
    return 'refused';
  }
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    buffer += decoder.decode(chunk.value, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const event = parseEvent(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (event.name === 'complete') return 'completed';
      if (event.name !== 'next') continue;
      const result = JSON.parse(event.data) as {
        data?: { campaignUpdated: { status: string; progress: CampaignState } };
        errors?: unknown[];
      };
      if (result.errors?.length) watcher.errors.push(JSON.stringify(result.errors).slice(0, 300));
      const campaign = result.data?.campaignUpdated;
      if (campaign) {
        watcher.events += 1;
        watcher.last = { status: campaign.status, done: campaign.progress.done, total: campaign.progress.total };
        watcher.lastAt = Date.now();
      }
    }
  }
  return 'cut';
}

/** Holds a subscription until `stop` aborts: on `first` at first, through `fallback` after each cut. */
export function watch(
  first: { name: string; url: string },
  fallback: string,
  customer: Customer,
  stop: AbortSignal,
): { watcher: Watcher; done: Promise<void> } {
  const watcher: Watcher = {
    campaignId: customer.campaignIds[0]!,
    firstServer: first.name,
    events: 0,
    cuts: 0,
    reconnects: 0,
    errors: [],
    last: undefined,
    lastAt: 0,
  };
  const done = (async () => {
    let url = first.url;
    for (let opened = false; !stop.aborted; opened = true) {
      if (opened) watcher.reconnects += 1;
      // A connection that could not be made, or was cut once open, both end in a reconnection.
      const ended = await follow(url, customer, watcher, stop).catch(() => 'cut' as const);
      if (stop.aborted || ended === 'completed') return;
      if (ended === 'cut') watcher.cuts += 1;
      url = fallback;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  return { watcher, done };
}
