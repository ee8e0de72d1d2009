import type { Server, ServerResponse } from 'node:http';

const eventStreams = new WeakSet<ServerResponse>();

/**
 * Marks a response as an event stream (a GraphQL subscription): it never finishes on its own, so a
 * drain cuts it at once instead of waiting for it. Node does not show headers given to writeHead, so
 * the app marks what it serves.
 */
export function markEventStream(response: ServerResponse): void {
  eventStreams.add(response);
}

/**
 * Prepares a server to stop gracefully; returns the function that stops it: no new connections, requests
 * in flight finish, then each connection closes. Resolves true once all have, or false at the timeout,
 * when the connections left are cut.
 */
export function drainable(server: Server): (timeoutMs: number) => Promise<boolean> {
  let draining = false;
  const open = new Set<ServerResponse>();
  // server.close() closes idle keep-alive connections only once; a connection whose request finishes
  // later would stay open until its keep-alive timeout.
  server.on('request', (_request, response) => {
    open.add(response);
    response.on('close', () => open.delete(response));
    response.on('finish', () => {
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
  });
  return (timeoutMs) =>
    new Promise((resolve) => {
      draining = true;
      const timer = setTimeout(() => {
        server.closeAllConnections();
        resolve(false);
      }, timeoutMs);
      server.close(() => {
        clearTimeout(timer);
        resolve(true);
      });
      // Cut rather than completed, so that their clients see a dropped connection and reconnect, to
      // another instance.
      for (const response of open) if (eventStreams.has(response)) response.destroy();
    });
}
