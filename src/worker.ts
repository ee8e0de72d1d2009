import { loadConfigOrExit } from './config.js';
import { waitForDatabase } from './db/connect.js';
import { databaseTarget, openDatabase } from './db/database.js';
import { DatabaseUnreachableError } from './db/unreachable.js';
import { listen } from './http/listen.js';
import { checkPortFree, PortInUseError } from './http/port.js';
import { createWorkerApp } from './http/worker-app.js';
import { startProcessJobs } from './jobs/process-jobs.js';
import { createLogger } from './logger.js';
import { registerDatabaseChecks } from './ops/database-checks.js';
import { createEventBus } from './ops/event-bus.js';
import { Readiness } from './ops/readiness.js';
import { ShutdownHooks } from './ops/shutdown-hooks.js';
import { shutdownTracing, startTracing } from './ops/tracing.js';
import { idleDialer } from './services/dialer/control.js';
import { idleVoice } from './services/voice/control.js';
import { systemClock } from './services/context.js';

// `npm run worker`: a dialer process, which also delivers webhooks and provisions agents, and serves only
// the operations endpoints on WORKER_PORT. Any number of them share the campaigns of one PostgreSQL
// database through the job engine; the embedded database belongs to one process, so a separate worker
// needs DATABASE_URL.

const config = loadConfigOrExit();
await startTracing();
if (!config.databaseUrl) {
  console.error('npm run worker needs DATABASE_URL: the embedded database already has its dialer inside npm start.');
  process.exit(1);
}

const log = createLogger(config.logLevel);
// A port another process holds stops the start at once, as npm start's does.
if (config.workerPort !== null) {
  await checkPortFree(config.host, config.workerPort, 'WORKER_PORT', 'npm run worker').catch((error: unknown) => {
    if (!(error instanceof PortInUseError)) throw error;
    console.error(error.message);
    process.exit(1);
  });
}
// A database that cannot be reached is one line, as a bad setting is.
await waitForDatabase(config.databaseUrl, { timeoutMs: config.databaseConnectTimeoutSeconds * 1000, log }).catch((error: unknown) => {
  if (!(error instanceof DatabaseUnreachableError)) throw error;
  console.error(error.message);
  process.exit(1);
});
const db = await openDatabase(databaseTarget(config));
await db.migrate();
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
const jobs = await startProcessJobs(env, db, config);

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
log.info({ pid: process.pid, url }, 'dialer worker started');

// SIGTERM: the dialer stops and hands its campaigns back to the queue, then the event bus and the
// database close, each bounded by SHUTDOWN_TIMEOUT_SECONDS. A second signal stops at once.
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
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, 'dialer worker stopping');
    const clean = await hooks.run(log, config.shutdownTimeoutSeconds * 1000);
    log.info({ clean }, 'dialer worker stopped');
    process.exit(clean ? 0 : 1);
  });
}
