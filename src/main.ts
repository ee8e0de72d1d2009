import { loadConfigOrExit } from './config.js';
import { DataDirInUseError } from './db/data-dir-lock.js';
import { DatabaseUnreachableError } from './db/unreachable.js';
import { checkPortFree, PortInUseError } from './http/port.js';
import { createLogger } from './logger.js';
import { startupProgress } from './ops/startup-progress.js';

// `npm start`: the whole service in one process. With no configuration at all it runs on the embedded
// database in ./.data with demo data, and prints a token to try it with.

const config = loadConfigOrExit();

// Refusals a person can act on get one line and no stack trace: a port or data folder in use, a database
// that cannot be reached.
const refuse = (error: unknown) => {
  if (error instanceof DataDirInUseError || error instanceof PortInUseError || error instanceof DatabaseUnreachableError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
};
await checkPortFree(config.host, config.port).catch(refuse);
// The embedded database opens while the modules load: its files are read, the template copied and its
// WebAssembly compiled on other threads meanwhile. A folder in use is refused where it is awaited.
const embedded = config.databaseUrl ? undefined : (await import('./db/embedded.js')).openEmbeddedAhead(config.dataDir, config.seedDemo);

// A slow step says what it is doing, so that a start on a busy machine never sits silent.
const progress = startupProgress((line) => console.log(line), config.startupProgressAfterMs);
// The service's modules load after the check, so that a refusal comes at once.
const { startRuntime, DEMO_USER_ID } = await progress("Loading the service's modules", async () => {
  const { startTracing } = await import('./ops/tracing.js');
  await startTracing();
  const [{ startRuntime }, { DEMO_USER_ID }] = await Promise.all([import('./runtime.js'), import('./demo/seed.js')]);
  return { startRuntime, DEMO_USER_ID };
});
const log = createLogger(config.logLevel);
const runtime = await startRuntime(config, log, undefined, progress, embedded).catch(refuse);
log.info({ url: runtime.url, database: runtime.db.kind }, 'listening');

const lines = [
  '',
  `  Service ready (${runtime.db.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL'})`,
  `  GraphQL:        ${runtime.url}/graphql${config.graphql.graphiql ? '  (GraphiQL in a browser)' : ''}`,
  `  REST v1:        ${runtime.url}/api/v1/`,
  `  REST v1 docs:   ${runtime.url}/api/v1/docs/`,
  ...(config.console ? [`  Console:        ${runtime.url}/console/`] : []),
];
const token = runtime.demoToken;
if (token) {
  lines.push(
    `  Demo token (7 days, user ${DEMO_USER_ID}):`,
    `    ${token}`,
    `  Try: curl -H "Authorization: Bearer ${token}" ${runtime.url}/api/v1/agents/templates/`,
  );
}
console.log(`${lines.join('\n')}\n`);

// SIGTERM (orchestrators) or Ctrl-C: stop gracefully, and exit 1 if that was not clean. A second
// signal does not wait.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, 'shutting down');
    runtime.close().then(
      (clean) => {
        log.info({ clean }, 'shut down');
        process.exit(clean ? 0 : 1);
      },
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
