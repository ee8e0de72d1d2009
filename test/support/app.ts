import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Logger } from 'pino';
import type { Database } from '../../src/db/database.js';
import { seedAgentTemplates } from '../../src/db/seed.js';
import { createApp } from '../../src/app.js';
import { serveBrainSockets } from '../../src/http/retell-llm-socket.js';
import type { BrainDeps } from '../../src/services/voice/brain/conversation.js';
import type { CorsOrigins } from '../../src/http/cors.js';
import { createLogger } from '../../src/logger.js';
import { registerDatabaseChecks } from '../../src/ops/database-checks.js';
import { createRateLimiter, type RateLimiterOptions, type RateLimitRules } from '../../src/ops/rate-limits.js';
import { Readiness } from '../../src/ops/readiness.js';
import type { RouteDefinition } from '../../src/rest/route.js';
import type { TrustedDocuments } from '../../src/schema/server/trusted-documents.js';
import { createAuthenticator, signToken, UserRegistry, type AuthSettings } from '../../src/services/auth.js';
import { systemClock, type Clock, type ServiceEnv } from '../../src/services/context.js';
import { idleDialer, type DialerControl } from '../../src/services/dialer/control.js';
import type { RetellWebhookSettings } from '../../src/services/voice/providers/retell/callbacks.js';
import type { TwilioWebhookSettings } from '../../src/services/voice/providers/twilio/callbacks.js';
import { inProcessEventBus, type EventBus } from '../../src/services/events.js';
import type { VoiceControl } from '../../src/services/voice/control.js';
import { SimulatedVoiceProvider } from '../../src/services/voice/providers/simulated/agents.js';
import { provisionAgent } from '../../src/services/voice/provisioning.js';
import { defaultSettings, type Settings } from '../../src/services/settings.js';
import { OffsetMemory } from '../../src/services/offset-pages.js';
import { openTestDatabase } from './database.js';

export const TEST_SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

export interface TestAppOptions {
  auth?: AuthSettings;
  clock?: Clock;
  maxBodyBytes?: number;
  maxImportBodyBytes?: number;
  settings?: Partial<Settings>;
  dialer?: DialerControl;
  introspection?: boolean;
  /** The token GraphiQL opens with (development's demo token); none unless given. */
  graphiqlToken?: string;
  /** Compiled reads on (the default) or off, to compare their answers with the resolvers'. */
  compiledReads?: boolean;
  /** The only operations the app runs, by hash (GRAPHQL_TRUSTED_DOCUMENTS); any document unless given. */
  trustedDocuments?: TrustedDocuments;
  /** Origins allowed to call from a browser; any unless given, as in development. */
  corsOrigins?: CorsOrigins;
  /** Serve the web console at /console/ (off unless given). */
  console?: boolean;
  routes?: RouteDefinition[];
  stripeWebhookSecret?: string;
  retellWebhook?: RetellWebhookSettings;
  twilioWebhook?: TwilioWebhookSettings;
  /** Where the app logs; silent unless TEST_LOG_LEVEL is set. */
  log?: Logger;
  metricsToken?: string;
  /** A database to serve instead of a fresh one of this file's own; the app closes it. */
  database?: Database;
  /**
   * Agents' provisioning: unless given, each change is provisioned by the simulator's provider at once,
   * in the request (the job's own code, without its queue), so that agents are ready as they are made.
   */
  voice?: VoiceControl;
  /** Where live updates travel; this app's own in-process bus unless given. The app closes it. */
  events?: EventBus;
  /** The built-in agent's LLM and tools; its sockets answer 503 unless given. */
  brain?: Omit<BrainDeps, keyof ServiceEnv>;
  /** false: v1 pages at deep offsets always skip from the top, as the reference a continued page is compared with. */
  offsetMemory?: false;
  /** Per-user budgets; none unless given, so that suites may send many requests as one user. */
  rateLimits?: Partial<RateLimitRules> & Pick<RateLimiterOptions, 'redisUrl' | 'keyPrefix'>;
}

export interface RequestOptions {
  token?: string | null;
  headers?: Record<string, string>;
  body?: unknown;
  /** A raw body sent as given (with its own content-type header). */
  raw?: BodyInit;
}

export interface GraphQLResult<T = any> {
  status: number;
  data?: T;
  errors?: { message: string; path?: string[]; extensions?: Record<string, any> }[];
}

/** The whole HTTP application on a real socket, over a database of this test file's own. */
export async function startTestApp(options: TestAppOptions = {}) {
  const db: Database = options.database ?? (await openTestDatabase());
  await seedAgentTemplates(db);
  const auth = options.auth ?? { secret: TEST_SECRET };
  const log = options.log ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const readiness = new Readiness(500);
  registerDatabaseChecks(readiness, db.sql);
  const { redisUrl, keyPrefix, ...rules } = options.rateLimits ?? {};
  const rateLimiter = createRateLimiter({ requests: null, import: null, dispatch: null, ...rules }, { redisUrl, keyPrefix, log });
  const events = options.events ?? inProcessEventBus(log);
  const env: ServiceEnv = {
    db: db.prisma,
    sql: db.sql,
    clock: options.clock ?? systemClock,
    log,
    settings: { ...defaultSettings, ...options.settings },
    dialer: options.dialer ?? idleDialer,
    events,
    voice: options.voice ?? { queued: (agentId) => provisionAgent(env, new SimulatedVoiceProvider(), agentId, true) },
    offsets: options.offsetMemory === false ? undefined : new OffsetMemory(),
  };
  const app = createApp({
    env,
    authenticator: createAuthenticator(auth, new UserRegistry(db.sql), db.sql),
    limits: {
      maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
      maxImportBodyBytes: options.maxImportBodyBytes ?? 64 * 1024 * 1024,
    },
    graphql: {
      introspection: options.introspection ?? true,
      graphiql: true,
      graphiqlToken: options.graphiqlToken,
      compiledReads: options.compiledReads ?? true,
      trustedDocuments: options.trustedDocuments,
    },
    corsOrigins: options.corsOrigins ?? '*',
    console: options.console,
    ...(options.routes ? { routes: options.routes } : {}),
    stripeWebhookSecret: options.stripeWebhookSecret,
    retellWebhook: options.retellWebhook,
    twilioWebhook: options.twilioWebhook,
    metricsToken: options.metricsToken,
    readiness,
    rateLimiter,
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, createServer: app.createServer, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    // Idle connections are left for the tests' client to end. With a keep-alive timeout the server closes
    // them at its own, while fetch's keep-alive clock counts timer ticks, not time: on a loaded machine it
    // still sends on a connection the server has just closed, and the request fails with ECONNRESET or
    // "other side closed". Closing the server still ends idle connections.
    (s as Server).keepAliveTimeout = 0;
  });
  const brainSockets = serveBrainSockets(server as Server, {
    ...env,
    brain: options.brain,
    maxFrameBytes: options.maxImportBodyBytes ?? 64 * 1024 * 1024,
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const token = (sub: string = randomUUID(), role?: 'admin') =>
    signToken(auth.secret ?? TEST_SECRET, { sub, role, issuer: auth.issuer, audience: auth.audience });

  async function request(method: string, path: string, opts: RequestOptions = {}) {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: BodyInit | undefined = opts.raw;
    if (opts.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(opts.body);
    }
    const response = await fetch(url + path, { method, headers, body, redirect: 'manual' });
    const text = await response.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  }

  async function gql<T = any>(
    query: string,
    variables: Record<string, unknown> = {},
    tokenValue?: string | null,
  ): Promise<GraphQLResult<T>> {
    const response = await request('POST', '/graphql', { token: tokenValue, body: { query, variables } });
    return { status: response.status, ...response.json };
  }

  return {
    url,
    /** The full path alone (Hono), without the lean lanes that the server at `url` puts in front of it. */
    fullPath: app.fetch,
    db,
    prisma: db.prisma,
    sql: db.sql,
    readiness,
    token,
    request,
    gql,
    async close() {
      brainSockets.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([rateLimiter.close(), events.close()]);
      await db.close();
    },
  };
}

export type TestApp = Awaited<ReturnType<typeof startTestApp>>;
