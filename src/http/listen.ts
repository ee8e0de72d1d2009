import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import { PortInUseError } from './port.js';

/** Serves `fetch` over HTTP; resolves once it listens, rejects with PortInUseError when the port is taken. */
export function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  hostname: string,
  port: number,
  portInUse: (hostname: string, port: number) => Error = (h, p) => new PortInUseError(h, p),
): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    // serve() makes a node:http server unless told otherwise.
    const server = serve({ fetch, hostname, port }, () => resolve(server as Server));
    server.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? portInUse(hostname, port) : error));
  });
}
