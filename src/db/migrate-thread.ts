import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import pg from 'pg';
import { FailedMigrationError, migrateOnPool } from './migrations.js';

// PostgreSQL migrations run in a thread of their own, with a heap of its own. Run in the server's thread,
// the work of a migration (long scripts, few and long-lived objects) taught V8 to allocate some objects
// of the code every request shares (node-postgres's) straight into the old generation, and that choice
// stayed for the process's life: a v1 list then cost about 45% more CPU in garbage collection (measured,
// docs/decisions.md). The thread ends with its migrations, its heap and what it learned with it.

type Outcome =
  { applied: string[] } | { failed: string[] } | { error: { message: string; migration?: string | undefined; code?: string | undefined } };

/** Applies the pending migrations to a PostgreSQL database in a new thread; returns the names applied. */
export function migrateInThread(url: string): Promise<string[]> {
  // Under tsx and the tests this module is TypeScript: the thread registers tsx's hooks first (a
  // thread does not inherit them), then imports it.
  const source = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const thread = import.meta.url.endsWith('.ts')
    ? new Worker(source, { eval: true, workerData: { url } })
    : new Worker(new URL(import.meta.url), { workerData: { url } });
  return new Promise((resolve, reject) => {
    thread.once('message', (outcome: Outcome) => {
      if ('applied' in outcome) resolve(outcome.applied);
      else if ('failed' in outcome) reject(new FailedMigrationError(outcome.failed));
      else reject(Object.assign(new Error(outcome.error.message), outcome.error));
    });
    thread.once('error', reject);
    thread.once('exit', (code) => reject(new Error(`the migration thread ended (exit code ${code}) before it answered`)));
  });
}

async function run(url: string): Promise<Outcome> {
  // A pool of its own, ended with the thread: the advisory lock goes with its session.
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    return { applied: await migrateOnPool(pool) };
  } catch (e) {
    if (e instanceof FailedMigrationError) return { failed: e.migrations };
    const error = e as Error & { migration?: string; code?: string };
    return { error: { message: error.message, migration: error.migration, code: error.code } };
  } finally {
    await pool.end();
  }
}

if (!isMainThread && parentPort && (workerData as { url?: string } | undefined)?.url) {
  parentPort.postMessage(await run((workerData as { url: string }).url));
}
