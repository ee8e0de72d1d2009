import { serve } from '@hono/node-server';
import type { createServer, Server } from 'node:http';
import { PortInUseError } from './port.js';

/** What serves HTTP: a fetch handler, and optionally the node:http server to run it in (the API's lean lane). */
export interface Served {
  fetch: (request: Request) => Response | Promise<Response>;
  createServer?: typeof createServer;
}

/** Serves `app` over HTTP; resolves once it listens, rejects with PortInUseError when the port is taken. */
export function listen(
  app: Served,
  hostname: string,
  port: number,
  portInUse: (hostname: string, port: number) => Error = (h, p) => new PortInUseError(h, p),
): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    // serve() makes a plain node:http server unless given one.
    const options = { fetch: app.fetch, hostname, port, ...(app.createServer ? { createServer: app.createServer } : {}) };
    const server = serve(options, () => resolve(server as Server));
    server.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? portInUse(hostname, port) : error));
  });
}
