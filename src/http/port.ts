import { createServer } from 'node:net';

// A port another process holds should stop a start at once, with one line that says what to do, not
// after the migrations and seeding and with a stack trace.

export class PortInUseError extends Error {
  constructor(host: string, port: number) {
    super(`Port ${port} on ${host} is already in use: stop the process using it, or start on another port (PORT=${port + 1} npm start).`);
  }
}

/** Listens on the address for a moment: a PortInUseError when another process holds it. */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? new PortInUseError(host, port) : error));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
