import type { Server } from 'node:http';

/**
 * Serves `server` on a free loopback port and prints the line spawn.ts waits for; on SIGTERM, closes it and
 * then `close` (its database pool), an orderly exit so that a CPU profile (BENCH_CPU_PROFILE=1) is written.
 */
export function listenUntilTerm(server: Server, close: () => Promise<void>): void {
  server.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number };
    console.log(`listening on http://127.0.0.1:${address.port}`);
  });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => void close().then(() => process.exit(0)));
  });
}
