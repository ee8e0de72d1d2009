import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { waitForDatabase } from './db/connect.js';
import { databaseTarget, describeOpening, openDatabase, type Database } from './db/database.js';
import { resolveJwtSecret } from './db/dev-secret.js';
import { embeddedDataPath, type EmbeddedOpening } from './db/embedded.js';
import { seedAgentTemplates } from './db/seed.js';
import { holdsUndatedDemo, redateCopiedDemo } from './demo/redate.js';
import { DEMO_USER_ID, seedDemo } from './demo/seed.js';
import { createApp } from './app.js';
import { startProcessJobs } from './jobs/process-jobs.js';
import type { JobBacklog } from './jobs/queues.js';
import { notifyingDialer } from './jobs/wake-notifications.js';
import { drainable } from './http/drain.js';
import { serveBrainSockets } from './http/retell-llm-socket.js';
import { listen } from './http/listen.js';
import { registerDatabaseChecks } from './ops/database-checks.js';
import { createEventBus } from './ops/event-bus.js';
import { createRateLimiter } from './ops/rate-limits.js';
import { Readiness } from './ops/readiness.js';
import { ShutdownHooks, type ShutdownHook } from './ops/shutdown-hooks.js';
import { silentProgress, type Progress } from './ops/startup-progress.js';
import { shutdownTracing } from './ops/tracing.js';
import { createAuthenticator, signToken, UserRegistry } from './services/auth.js';
import { systemClock, type Clock, type ServiceEnv } from './services/context.js';
import { idleDialer } from './services/dialer/control.js';
import { brainTools } from './services/voice/brain/tools.js';
import { idleVoice } from './services/voice/control.js';
import { OffsetMemory } from './services/offset-pages.js';

export interface Runtime {
  url: string;
  db: Database;
  jwtSecret: string | undefined;
  /** Development with demo data: a token of the demo user (7 days), printed and prefilled in GraphiQL. */
  demoToken: string | undefined;
  demoSeeded: boolean;
  /** What /readyz checks; the dialer registers its job engine here. */
  readiness: Readiness;
  /** Work to finish on shutdown, after HTTP drained and before the database closes (see ShutdownHooks). */
  onShutdown(name: string, hook: ShutdownHook): void;
  /**
   * Stops gracefully: no new connections, requests in flight finish (up to the shutdown timeout), the
   * shutdown hooks run, the database closes. Resolves false when a request was cut off or a hook failed.
   */
  close(): Promise<boolean>;
}

/**
 * Opens the database (or takes the embedded one's opening, begun ahead), applies migrations, seeds, and
 * serves HTTP until closed; each step through `progress`.
 */
export async function startRuntime(
  config: Config,
  log: Logger,
  clock: Clock = systemClock,
  progress: Progress = silentProgress,
  embedded?: EmbeddedOpening,
): Promise<Runtime> {
  const { databaseUrl } = config;
  if (databaseUrl) {
    await progress('Waiting for PostgreSQL to accept connections', () =>
      waitForDatabase(databaseUrl, { timeoutMs: config.databaseConnectTimeoutSeconds * 1000, log }),
    );
  }
  const target = databaseTarget(config, embedded);
  const db = await progress(describeOpening(target), () => openDatabase(target));
  const readiness = new Readiness();
  const shutdownHooks = new ShutdownHooks();
  // First added, so last run: the spans of the other hooks' work are exported too.
  shutdownHooks.add('tracing', shutdownTracing);
  const redis = { redisUrl: config.redisUrl, log };
  const rateLimiter = createRateLimiter(config.rateLimits, { ...redis, keyPrefix: `${config.redisPrefix}:ratelimit` });
  const events = createEventBus({ ...redis, prefix: config.redisPrefix });
  try {
    const applied = await progress('Applying database migrations', () => db.migrate());
    if (applied.length) log.info({ migrations: applied }, 'applied migrations');
    await progress('Seeding the agent templates', () => seedAgentTemplates(db));
    const env: ServiceEnv = {
      db: db.prisma,
      sql: db.sql,
      clock,
      log,
      settings: config.settings,
      dialer: idleDialer,
      events,
      voice: idleVoice,
      offsets: new OffsetMemory(),
    };
    // A new data folder copied from the demo template has the demo data, seeded at install: moved to the
    // present here. Otherwise the demo is seeded once, now.
    const pgdata = databaseUrl ? undefined : embeddedDataPath(config.dataDir);
    let demoSeeded = false;
    if (config.seedDemo && pgdata && holdsUndatedDemo(pgdata)) {
      demoSeeded = await progress('Moving the demo data to today (first start only)', () => redateCopiedDemo(db.sql, pgdata, clock.now()));
    } else if (config.seedDemo) {
      demoSeeded = await progress('Seeding the demo data (first start only)', () => seedDemo(env));
    }
    let jobBacklog: JobBacklog | undefined;
    if (config.runDialer) {
      await progress('Starting the job engine', async () => {
        const jobs = await startProcessJobs(env, db, config);
        // Unfinished calls go back to the job engine's care: their leases run out and any worker retries them.
        shutdownHooks.add('jobs', () => jobs.stop());
        readiness.register('jobEngine', () => {
          if (!jobs.dialer.running()) throw new Error('the dialer job engine is not running');
        });
        jobBacklog = jobs.backlog;
      });
    } else if (config.databaseUrl) {
      env.dialer = notifyingDialer(db.sql, log);
    }

    registerDatabaseChecks(readiness, db.sql);

    const jwtSecret = await resolveJwtSecret(config);
    const authenticator = createAuthenticator({ ...config.jwt, secret: jwtSecret }, new UserRegistry(db.sql), db.sql);
    const demoToken =
      jwtSecret && config.env !== 'production' && config.seedDemo
        ? await signToken(jwtSecret, {
            sub: DEMO_USER_ID,
            ttlSeconds: 7 * 24 * 3600,
            issuer: config.jwt.issuer,
            audience: config.jwt.audience,
          })
        : undefined;
    const app = createApp({
      env,
      authenticator,
      limits: config.limits,
      graphql: { ...config.graphql, graphiqlToken: demoToken },
      corsOrigins: config.corsOrigins,
      console: config.console,
      stripeWebhookSecret: config.stripeWebhookSecret,
      retellWebhook: config.retellWebhook,
      twilioWebhook: config.twilioWebhook,
      metricsToken: config.metricsToken,
      readiness,
      jobBacklog,
      rateLimiter,
    });

    // The LLM client (the openai package, some 10 MB of memory) loads only when an LLM is configured.
    const llm = config.llm ? (await import('./services/voice/brain/llm.js')).openLlm(config.llm) : undefined;
    const server = await listen(app, config.host, config.port);
    // Prisma compiles its query compiler on a process's first query, which a start no longer makes (its
    // steps use plain SQL once the database exists): it is done now, while no request waits for it yet.
    void db.prisma.$connect().catch((error: unknown) => log.warn({ err: error }, 'could not prepare the database client'));
    const drain = drainable(server);
    const brainSockets = serveBrainSockets(server, {
      ...env,
      brain: llm ? { llm, tools: brainTools } : undefined,
      maxFrameBytes: config.limits.maxImportBodyBytes,
    });
    const { port } = server.address() as AddressInfo;
    const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;

    const timeoutMs = config.shutdownTimeoutSeconds * 1000;
    const stop = async (): Promise<boolean> => {
      const draining = drain(timeoutMs);
      brainSockets.close();
      log.info('stopped accepting connections; letting requests in flight finish');
      const drained = await draining;
      if (!drained) log.warn({ timeoutMs }, 'requests still in flight at the shutdown timeout were cut off');
      const hooksFinished = await shutdownHooks.run(log, timeoutMs);
      await Promise.all([rateLimiter.close(), events.close()]);
      await db.close();
      return drained && hooksFinished;
    };
    let stopping: Promise<boolean> | undefined;
    return {
      url: `http://${host}:${port}`,
      db,
      jwtSecret,
      demoToken,
      demoSeeded,
      readiness,
      onShutdown: (name, hook) => shutdownHooks.add(name, hook),
      close: () => (stopping ??= stop()),
    };
  } catch (error) {
    await Promise.all([rateLimiter.close(), events.close()]);
    await db.close();
    throw error;
  }
}
