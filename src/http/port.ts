import { createServer } from 'node:net';

// A port another process holds should stop a start at once, with one line that says what to do, not
// after the migrations and seeding and with a stack trace.

export class PortInUseError extends Error {
  /** `setting` and `command`: how to start on another port. */
  constructor(host: string, port: number, setting = 'PORT', command = 'npm start') {
    super(
      `Port ${port} on ${host} is already in use: stop the process using it, or start on another port (${setting}=${port + 1} ${command}).`,
    );
  }
}

/** Listens on the address for a moment: a PortInUseError (naming `setting` and `command`) when another process holds it. */
export async function checkPortFree(host: string, port: number, setting?: string, command?: string): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(host, port, setting, command) : error),
    );
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
