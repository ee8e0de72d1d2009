import { setTimeout as sleep } from 'node:timers/promises';

// Several workers lock the same rows (a campaign, a credit account), so PostgreSQL will now and then
// pick one transaction as a deadlock victim or fail it on a serialization conflict. Such a transaction
// did nothing; running it again is the documented remedy. Every dialer transaction runs over the SQL
// sessions (node-postgres or PGlite), whose errors carry PostgreSQL's SQLSTATE in `code`.

/** deadlock_detected, serialization_failure. */
const RETRYABLE = new Set(['40P01', '40001']);

export async function retryOnConflict<T>(work: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || !RETRYABLE.has((error as { code?: unknown } | null)?.code as string)) throw error;
      await sleep(10 * attempt + Math.random() * 20);
    }
  }
}
