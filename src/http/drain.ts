import type { Server } from 'node:http';

/**
 * Prepares a server to stop gracefully; returns the function that stops it: no new connections, requests
 * in flight finish, then each connection closes. Resolves true once all have, or false at the timeout,
 * when the connections left are cut.
 */
export function drainable(server: Server): (timeoutMs: number) => Promise<boolean> {
  let draining = false;
  // server.close() closes idle keep-alive connections only once; a connection whose request finishes
  // later would stay open until its keep-alive timeout.
  server.on('request', (_request, response) => {
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
    });
}
