import type { GraphQLResult } from './app.js';

// A GraphQL subscription over Server-Sent Events, read with plain fetch as a graphql-sse client in
// "distinct connections" mode reads it: POST with Accept: text/event-stream, then `next` events
// carrying results and a `complete` event at the end.

export interface LiveSubscription<T = any> {
  status: number;
  headers: Headers;
  /** The data and errors of every `next` event so far. */
  results: GraphQLResult<T>[];
  /** True once the server sent `complete`. */
  completed: boolean;
  /** Resolves once `results` satisfy the condition; rejects if the stream ends first or at the timeout. */
  until(condition: (results: GraphQLResult<T>[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves once the stream has ended (completed or cut). */
  ended: Promise<void>;
  close(): void;
}

/**
 * Opens the subscription; resolves once the server has answered with the stream's headers, which yoga
 * sends only after the subscription has started listening.
 */
export async function subscribe<T = any>(
  url: string,
  query: string,
  variables: Record<string, unknown>,
  token: string | null,
): Promise<LiveSubscription<T>> {
  const abort = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });

  const results: GraphQLResult<T>[] = [];
  let completed = false;
  let finished = false;
  const waiters = new Set<() => void>();
  const changed = () => {
    for (const waiter of waiters) waiter();
  };

  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    const reader = response.body!.getReader();
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        buffer += decoder.decode(chunk.value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const event = parseEvent(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (event.name === 'next') results.push({ status: response.status, ...JSON.parse(event.data) });
          if (event.name === 'complete') completed = true;
        }
        changed();
      }
    } catch {
      // Cut by the server or closed by the test: either way the stream has ended.
    } finally {
      finished = true;
      changed();
    }
  })();

  return {
    status: response.status,
    headers: response.headers,
    results,
    get completed() {
      return completed;
    },
    ended,
    until(condition, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (condition(results)) done(resolve);
          else if (finished) done(() => reject(new Error(`the stream ended first; results: ${JSON.stringify(results)}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`timed out; results: ${JSON.stringify(results)}`))), timeoutMs);
        const done = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      });
    },
    close: () => abort.abort(),
  };
}

/** One event: `event:` names it, `data:` lines carry it, lines starting with `:` are comments (pings). */
export function parseEvent(block: string): { name: string; data: string } {
  let name = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') name = value;
    else if (field === 'data') data.push(value);
  }
  return { name, data: data.join('\n') };
}
