import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { resolveJwtSecret } from './db/dev-secret.js';
import { seedAgentTemplates, seedDemo } from './db/seed.js';
import { createApp } from './http/app.js';
import { registerDatabaseChecks } from './ops/database-checks.js';
import { createRateLimiter } from './ops/rate-limits.js';
import { Readiness } from './ops/readiness.js';
import { createAuthenticator, UserRegistry } from './services/auth.js';
import { systemClock, type Clock } from './services/context.js';

export interface Runtime {
  url: string;
  db: Database;
  jwtSecret: string | undefined;
  demoSeeded: boolean;
  /** What /readyz checks; the dialer registers its job engine here. */
  readiness: Readiness;
  close(): Promise<void>;
}

/** Opens the database, applies migrations, seeds, and serves HTTP until closed. */
export async function startRuntime(config: Config, log: Logger, clock: Clock = systemClock): Promise<Runtime> {
  const db = await openDatabase(
    config.databaseUrl ? { kind: 'postgres', url: config.databaseUrl } : { kind: 'pglite', dataDir: config.dataDir },
  );
  try {
    const applied = await db.migrate();
    if (applied.length) log.info({ migrations: applied }, 'applied migrations');
    await seedAgentTemplates(db.prisma);
    const demoSeeded = config.seedDemo ? await seedDemo({ db: db.prisma, clock, log, settings: config.settings }) : false;

    const readiness = new Readiness();
    registerDatabaseChecks(readiness, db.prisma);

    const rateLimiter = createRateLimiter(config.rateLimits, { redisUrl: config.redisUrl, log });

    const jwtSecret = await resolveJwtSecret(config);
    const authenticator = createAuthenticator({ ...config.jwt, secret: jwtSecret }, new UserRegistry(db.prisma));
    const app = createApp({
      env: { db: db.prisma, clock, log, settings: config.settings },
      authenticator,
      limits: config.limits,
      graphql: config.graphql,
      stripeWebhookSecret: config.stripeWebhookSecret,
      metricsToken: config.metricsToken,
      readiness,
      rateLimiter,
    });

    const server = await listen(app.fetch, config.host, config.port);
    const { port } = server.address() as AddressInfo;
    const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    return {
      url: `http://${host}:${port}`,
      db,
      jwtSecret,
      demoSeeded,
      readiness,
      async close() {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await rateLimiter.close();
        await db.close();
      },
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}

function listen(fetch: (request: Request) => Response | Promise<Response>, hostname: string, port: number) {
  return new Promise<ServerType & { address(): AddressInfo | string | null }>((resolve, reject) => {
    const server = serve({ fetch, hostname, port }, () => resolve(server as never));
    server.once('error', reject);
  });
}
