import type { Logger } from 'pino';
import pg from 'pg';
import { DatabaseUnreachableError } from './unreachable.js';

// The first connection to PostgreSQL, made before anything else uses the database. A server that is
// still starting (nothing listens yet, or it answers 57P03) is waited for, with a bounded and logged
// backoff, as happens when a deployment starts the service and its database together; anything else
// (an unknown database, role or host, a wrong password) cannot mend itself and stops the start at once.
// Either way the entry point prints one line, never node-postgres's stack.

export interface ConnectOptions {
  /** How long a database that is still starting is waited for; 0 tries once. */
  timeoutMs: number;
  log: Logger;
}

/** Errors of a server that is not accepting connections yet, but may be in a moment. */
const STARTING = new Set(['ECONNREFUSED', 'ECONNRESET', 'EAI_AGAIN', '57P03']);
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;

/** The connection string without its password or query (which may carry one), for messages and logs. */
export function redactedDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.search = '';
    return parsed.toString();
  } catch {
    return 'DATABASE_URL';
  }
}

/**
 * Opens one session on `url` and closes it again. Retries while the server is starting, doubling the
 * wait from 250 ms up to 5 s, until `timeoutMs` has passed; throws DatabaseUnreachableError when it
 * gives up or the failure is one that waiting cannot fix.
 */
export async function waitForDatabase(url: string, { timeoutMs, log }: ConnectOptions): Promise<void> {
  const database = redactedDatabaseUrl(url);
  const deadline = Date.now() + timeoutMs;
  let delay = FIRST_DELAY_MS;
  for (let attempt = 1; ; attempt += 1) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: Math.max(1_000, deadline - Date.now()) });
    // A session the server drops while it is still being checked would otherwise be an unhandled 'error'.
    client.on('error', () => {});
    try {
      await client.connect();
      await client.end();
      if (attempt > 1) log.info({ database, attempt }, 'database accepting connections');
      return;
    } catch (error) {
      await client.end().catch(() => {});
      const cause = causeOf(error);
      const left = deadline - Date.now();
      if (!isStarting(error)) throw new DatabaseUnreachableError(`Cannot connect to the database at ${database}: ${cause}.`);
      if (left <= 0) {
        const waited = timeoutMs > 0 ? `, still after ${Math.round(timeoutMs / 1000)} s of retries (DATABASE_CONNECT_TIMEOUT_SECONDS)` : '';
        throw new DatabaseUnreachableError(`Cannot connect to the database at ${database}: ${cause}${waited}.`);
      }
      const wait = Math.min(delay, left);
      log.warn({ database, cause, attempt, retryInMs: wait }, 'database not accepting connections yet; retrying');
      await new Promise((resolve) => setTimeout(resolve, wait));
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }
}

const codeOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;

/** A refused or reset connection, a name the resolver could not answer yet, 57P03, or a connect that timed out. */
function isStarting(error: unknown): boolean {
  const code = codeOf(error);
  return code ? STARTING.has(code) : error instanceof Error && /timeout/i.test(error.message);
}

/** The failure in words: node-postgres's message for what the server said, plainer ones for the network. */
function causeOf(error: unknown): string {
  const code = codeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused, nothing accepts connections at that address (ECONNREFUSED)';
    case 'ENOTFOUND':
      return 'host name not found (ENOTFOUND)';
    case undefined:
      return message;
    default:
      return `${message} (${code})`;
  }
}
