import type { Config } from './config.js';
import { waitForDatabase } from './db/connect.js';
import { databaseTarget, describeOpening, openDatabase } from './db/database.js';
import { listen } from './http/listen.js';
import { PortInUseError } from './http/port.js';
import { createWorkerApp } from './http/worker-app.js';
import { startProcessJobs } from './jobs/process-jobs.js';
import type { Logger } from 'pino';
import { registerDatabaseChecks } from './ops/database-checks.js';
import { createEventBus } from './ops/event-bus.js';
import { Readiness } from './ops/readiness.js';
import { ShutdownHooks } from './ops/shutdown-hooks.js';
import type { Progress } from './ops/startup-progress.js';
import { shutdownTracing } from './ops/tracing.js';
import { systemClock } from './services/context.js';
import { idleDialer } from './services/dialer/control.js';
import { idleVoice } from './services/voice/control.js';

// What `npm run worker` starts (worker.ts): the job engines on PostgreSQL and the operations endpoints on
// WORKER_PORT. Each step goes through `progress`, as npm start's do (runtime.ts).

/** Waits for the database, migrates it, starts the job engines and serves the operations endpoints. */
export async function startWorker(config: Config & { databaseUrl: string }, log: Logger, progress: Progress) {
  const { databaseUrl } = config;
  await progress('Waiting for PostgreSQL to accept connections', () =>
    waitForDatabase(databaseUrl, { timeoutMs: config.databaseConnectTimeoutSeconds * 1000, log }),
  );
  const target = databaseTarget(config);
  const db = await progress(describeOpening(target), () => openDatabase(target));
  await progress('Applying database migrations', () => db.migrate());
  // Without REDIS_URL its live updates reach no subscriber: they live in other processes.
  const events = createEventBus({ redisUrl: config.redisUrl, prefix: config.redisPrefix, log });
  const env = {
    db: db.prisma,
    sql: db.sql,
    clock: systemClock,
    log,
    settings: config.settings,
    dialer: idleDialer,
    events,
    voice: idleVoice,
  };
  const jobs = await progress('Starting the job engine', () => startProcessJobs(env, db, config));

  const readiness = new Readiness();
  registerDatabaseChecks(readiness, db.sql);
  readiness.register('jobEngine', () => {
    if (!jobs.dialer.running()) throw new Error('the dialer job engine is not running');
  });
  const app = createWorkerApp({
    env,
    metricsToken: config.metricsToken,
    readiness,
    jobBacklog: jobs.backlog,
  });
  const server =
    config.workerPort === null
      ? null
      : await listen(app, config.host, config.workerPort, (host, port) => new PortInUseError(host, port, 'WORKER_PORT', 'npm run worker'));
  const address = server?.address();
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = address && typeof address === 'object' ? `http://${host}:${address.port}` : undefined;

  // SIGTERM: the dialer stops and hands its campaigns back to the queue, then the event bus and the
  // database close, each bounded by SHUTDOWN_TIMEOUT_SECONDS.
  const hooks = new ShutdownHooks();
  // First added, so last run: the spans of the other hooks' work are exported too.
  hooks.add('tracing', shutdownTracing);
  hooks.add('database', () => db.close());
  // Run just before the database closes: /healthz answers while the work is handed over.
  hooks.add('http', async () => {
    if (!server) return;
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await closed;
  });
  hooks.add('events', () => events.close());
  hooks.add('jobs', () => jobs.stop());
  return { url, hooks };
}
