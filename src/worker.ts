import { loadConfigOrExit } from './config.js';
import { DatabaseUnreachableError } from './db/unreachable.js';
import { checkPortFree, PortInUseError } from './http/port.js';
import { createLogger } from './logger.js';
import { startupProgress } from './ops/startup-progress.js';

// `npm run worker`: a dialer process, which also delivers webhooks and provisions agents, and serves only
// the operations endpoints on WORKER_PORT. Any number of them share the campaigns of one PostgreSQL
// database through the job engine; the embedded database belongs to one process, so a separate worker
// needs DATABASE_URL.

const config = loadConfigOrExit();
const { databaseUrl } = config;
if (!databaseUrl) {
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

// A slow step says what it is doing, as npm start's do, so that a start on a busy machine never sits silent.
const progress = startupProgress((line) => console.log(line), config.startupProgressAfterMs);
// The worker's modules load after the checks, so that a refusal comes at once.
const { startWorker } = await progress("Loading the worker's modules", async () => {
  const { startTracing } = await import('./ops/tracing.js');
  await startTracing();
  return import('./worker-runtime.js');
});
// A database that cannot be reached is one line, as a bad setting is.
const { url, hooks } = await startWorker({ ...config, databaseUrl }, log, progress).catch((error: unknown) => {
  if (!(error instanceof DatabaseUnreachableError)) throw error;
  console.error(error.message);
  process.exit(1);
});
log.info({ pid: process.pid, url }, 'dialer worker started');

// SIGTERM: the worker's shutdown hooks run (worker-runtime.ts). A second signal stops at once.
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
