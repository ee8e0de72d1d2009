import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { CorsOrigins } from './http/cors.js';
import type { DialerRuntimeOptions } from './jobs/dialer.js';
import type { ProvisioningRuntimeOptions } from './jobs/provisioning.js';
import type { RetentionRuntimeOptions } from './jobs/retention.js';
import type { WebhookRuntimeOptions } from './jobs/webhooks.js';
import { DEFAULT_DELIVERY_OPTIONS } from './services/webhooks/delivery.js';
import { DEFAULT_DIALER_OPTIONS } from './services/dialer/options.js';
import type { RateLimitRule, RateLimitRules } from './ops/rate-limits.js';
import type { RetellWebhookSettings } from './services/voice/providers/retell/callbacks.js';
import type { TwilioWebhookSettings } from './services/voice/providers/twilio/callbacks.js';
import type { TrustedDocuments } from './schema/server/trusted-documents.js';
import type { Settings } from './services/settings.js';
import type { CheckoutSettings } from './services/billing/checkout.js';
import type { LlmServer } from './services/voice/brain/llm.js';

/** Largest request bodies: most endpoints, and contact imports, which carry whole files. */
export interface BodyLimits {
  maxBodyBytes: number;
  maxImportBodyBytes: number;
}

// Every setting comes from the environment and is checked once, at start, with one message per bad value.

const boolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const integer = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { error: `must be a whole number from ${min} to ${max}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: `must be at least ${min}` })
        .max(max, { error: `must be at most ${max}` }),
    );

/** `600/60`: 600 requests per 60 seconds; `off`: no limit. */
const rate = (fallback: string) =>
  z
    .string()
    .regex(/^(off|[1-9]\d{0,6}\/[1-9]\d{0,4})$/, { error: 'must be requests/seconds (like 600/60) or off' })
    .default(fallback)
    .transform((value): RateLimitRule | null => {
      if (value === 'off') return null;
      const [points, durationSeconds] = value.split('/').map(Number) as [number, number];
      return { points, durationSeconds };
    });

/** `*`, or origins separated by commas, each written as browsers send it: `https://app.example.com`. */
const corsOrigins = z.string().transform((value, ctx): CorsOrigins => {
  if (value.trim() === '*') return '*';
  const origins = value.split(',').map((origin) => origin.trim());
  if (!origins.every(isOrigin)) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be * or origins separated by commas, each like https://app.example.com (no path, no trailing slash)',
    });
    return z.NEVER;
  }
  return origins;
});

/**
 * Where Twilio reaches this service, as Twilio will request it: scheme, host, optional port and path
 * prefix (a proxy may strip it), no query; a trailing slash is dropped. Twilio signs the exact URL.
 */
const publicBaseUrl = z.string().transform((value, ctx) => {
  const trimmed = value.replace(/\/+$/, '');
  let url: URL | undefined;
  try {
    url = new URL(trimmed);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash || url.username || url.password) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be the http(s) URL this service is reached at, like https://calls.example.com (no query)',
    });
    return z.NEVER;
  }
  return trimmed;
});

/** The path of a trusted-documents manifest: a JSON object of hash -> document (graphql-codegen's persisted-documents.json). */
const trustedDocuments = z.string().transform((path, ctx): TrustedDocuments => {
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `must be the path of a readable JSON file (${(error as Error).message})` });
    return z.NEVER;
  }
  const entries = manifest !== null && typeof manifest === 'object' && !Array.isArray(manifest) ? Object.entries(manifest) : [];
  if (entries.length === 0 || !entries.every(([, document]) => typeof document === 'string')) {
    ctx.addIssue({
      code: 'custom',
      message: "must name a JSON object of document hashes to documents, like graphql-codegen's persisted-documents.json",
    });
    return z.NEVER;
  }
  return new Map(entries as [string, string][]);
});

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

const envSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test'], { error: 'must be development, production or test' }).default('development'),
    HOST: z.string().min(1).default('0.0.0.0'),
    PORT: integer(0, 65535).default(4000),
    WORKER_PORT: z
      .string()
      .regex(/^(off|\d{1,5})$/, { error: 'must be a port number from 0 to 65535, or off' })
      .transform((value) => (value === 'off' ? null : Number(value)))
      .pipe(z.number().max(65535, { error: 'must be a port number from 0 to 65535, or off' }).nullable())
      .default(4001),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, { error: 'must be a postgres:// or postgresql:// connection string' })
      .optional(),
    DATABASE_DIRECT_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, { error: 'must be a postgres:// or postgresql:// connection string' })
      .optional(),
    DATABASE_POOL_SIZE: integer(1, 1_000).default(10),
    DATABASE_CONNECT_TIMEOUT_SECONDS: integer(0, 3_600).default(30),
    DATA_DIR: z.string().min(1).default('./.data'),
    JWT_SECRET: z.string().min(32, { error: 'must be at least 32 characters long' }).optional(),
    JWT_JWKS_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    JWT_ISSUER: z.string().min(1).optional(),
    JWT_AUDIENCE: z.string().min(1).optional(),
    GRAPHQL_INTROSPECTION: boolean.optional(),
    GRAPHQL_COMPILED_READS: boolean.optional(),
    GRAPHIQL: boolean.optional(),
    GRAPHQL_TRUSTED_DOCUMENTS: trustedDocuments.optional(),
    CONSOLE: boolean.optional(),
    CORS_ORIGINS: corsOrigins.optional(),
    SEED_DEMO: boolean.optional(),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        error: 'must be fatal, error, warn, info, debug, trace or silent',
      })
      .default('info'),
    MAX_BODY_BYTES: integer(1024, 1024 * 1024 * 1024).default(1024 * 1024),
    MAX_IMPORT_BODY_BYTES: integer(1024, 1024 * 1024 * 1024).default(64 * 1024 * 1024),
    IMPORT_MAX_ROWS: integer(1, 10_000_000).default(100_000),
    CALL_RATE_CENTS_PER_MINUTE: integer(1, 100_000).default(10),
    DIALER: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
    TELEPHONY_PROVIDER: z.enum(['simulated', 'retell', 'twilio'], { error: 'must be simulated, retell or twilio' }).default('simulated'),
    SIM_SEED: z.string().min(1).default('demo'),
    SIM_TIME_SCALE: z
      .string()
      .regex(/^\d+(\.\d+)?$/, { error: 'must be a number from 0 (instant) up to 100 (1 is real time)' })
      .transform(Number)
      .pipe(z.number().max(100, { error: 'must be at most 100 (calls a hundred times longer than real ones)' }))
      .default(0.1),
    SIM_CALLBACK_RATE: z
      .string()
      .regex(/^\d+(\.\d+)?$/, { error: 'must be a number from 0 (never) to 1' })
      .transform(Number)
      .pipe(z.number().max(1, { error: 'must be at most 1' }))
      .default(0),
    SIM_CALL_LOG: z.string().min(1).optional(),
    DIALER_LEASE_SECONDS: integer(5, 86_400).optional(),
    DIALER_HOLD_MINUTES: integer(1, 240).default(5),
    DIALER_SWEEP_SECONDS: integer(1, 3_600).default(15),
    DIALER_TICKS_AT_ONCE: integer(1, 1000).default(DEFAULT_DIALER_OPTIONS.ticksAtOnce),
    RETELL_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default('https://api.retellai.com'),
    RETELL_API_KEY: z
      .string()
      .regex(/^\S{8,}$/, { error: 'must be a Retell API key (8+ characters, no spaces)' })
      .optional(),
    RETELL_WEBHOOK_KEY: z
      .string()
      .regex(/^\S{8,}$/, { error: 'must be the Retell API key that signs webhooks (8+ characters, no spaces)' })
      .optional(),
    RETELL_TIMEOUT_SECONDS: integer(1, 120).default(10),
    RETELL_WEBHOOK_TOLERANCE_SECONDS: integer(1, 3_600).default(300),
    RETELL_ANALYSIS_WAIT_SECONDS: integer(0, 3_600).default(300),
    LLM_BASE_URL: z
      .url({ protocol: /^https?$/, error: 'must be the http(s) URL of an OpenAI-compatible API, like http://localhost:11434/v1' })
      .optional(),
    LLM_API_KEY: z.string().regex(/^\S+$/, { error: 'must be an API key without spaces' }).optional(),
    LLM_MODEL: z.string().trim().min(1).max(200).optional(),
    LLM_TIMEOUT_SECONDS: integer(1, 120).default(8),
    AGENT_PROVISIONING_RETRIES: integer(0, 50).default(8),
    AGENT_DRIFT_SWEEP_SECONDS: integer(10, 86_400).default(600),
    RETENTION_PERIOD_SECONDS: integer(60, 86_400).default(3_600),
    WEBHOOK_LOG_RETENTION_DAYS: integer(7, 1_825).default(90),
    TWILIO_ACCOUNT_SID: z
      .string()
      .regex(/^AC[0-9a-fA-F]{32}$/, { error: 'must be a Twilio account SID (AC followed by 32 hex digits)' })
      .optional(),
    TWILIO_AUTH_TOKEN: z
      .string()
      .regex(/^[0-9a-fA-F]{32}$/, { error: "must be the Twilio account's auth token (32 hex digits)" })
      .optional(),
    TWILIO_API_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default('https://api.twilio.com'),
    PUBLIC_BASE_URL: publicBaseUrl.optional(),
    TWILIO_AGENT_STREAM_URL: z.url({ protocol: /^wss$/, error: 'must be a wss:// URL (the voice agent runtime)' }).optional(),
    TWILIO_TIMEOUT_SECONDS: integer(1, 120).default(10),
    STRIPE_WEBHOOK_SECRET: z
      .string()
      .regex(/^whsec_\S+$/, { error: 'must be a Stripe signing secret (whsec_...)' })
      .optional(),
    STRIPE_API_KEY: z
      .string()
      .regex(/^(sk|rk)_\S+$/, { error: 'must be a Stripe secret or restricted key (sk_... or rk_...)' })
      .optional(),
    STRIPE_API_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default('https://api.stripe.com'),
    STRIPE_CHECKOUT_SUCCESS_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    STRIPE_CHECKOUT_CANCEL_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, { error: 'must be a redis:// or rediss:// URL' })
      .optional(),
    REDIS_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,64}$/, { error: 'must be 1 to 64 letters, digits, ".", "_", ":" or "-"' })
      .default('callflow'),
    RATE_LIMIT: rate('600/60'),
    RATE_LIMIT_IMPORT: rate('10/60'),
    RATE_LIMIT_DISPATCH: rate('30/60'),
    SHUTDOWN_TIMEOUT_SECONDS: integer(1, 600).default(10),
    STARTUP_PROGRESS_AFTER_MS: integer(0, 600_000).default(1000),
    WEBHOOK_ALLOW_PRIVATE_URLS: boolean.optional(),
    WEBHOOK_TIMEOUT_SECONDS: integer(1, 60).default(10),
    WEBHOOK_RETRY_HOURS: integer(1, 168).default(24),
    WEBHOOK_DISABLE_AFTER_DAYS: integer(1, 30).default(5),
    METRICS_TOKEN: z
      .string()
      .regex(/^\S{16,}$/, { error: 'must be at least 16 characters, without spaces' })
      .optional(),
  })
  .superRefine((env, ctx) => {
    if (env.TELEPHONY_PROVIDER === 'retell') {
      for (const name of ['RETELL_API_KEY', 'RETELL_WEBHOOK_KEY'] as const) {
        if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'is required with TELEPHONY_PROVIDER=retell' });
      }
      if (env.NODE_ENV === 'production' && !env.RETELL_BASE_URL.startsWith('https://')) {
        ctx.addIssue({ code: 'custom', path: ['RETELL_BASE_URL'], message: 'must be an https URL in production (it carries the API key)' });
      }
    }
    if (env.TELEPHONY_PROVIDER === 'twilio') {
      for (const name of ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'PUBLIC_BASE_URL', 'TWILIO_AGENT_STREAM_URL'] as const) {
        if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'is required with TELEPHONY_PROVIDER=twilio' });
      }
      if (env.NODE_ENV === 'production' && !env.TWILIO_API_BASE_URL.startsWith('https://')) {
        ctx.addIssue({
          code: 'custom',
          path: ['TWILIO_API_BASE_URL'],
          message: 'must be an https URL in production (it carries the auth token)',
        });
      }
    }
    if (env.NODE_ENV === 'production' && env.PUBLIC_BASE_URL && !env.PUBLIC_BASE_URL.startsWith('https://')) {
      ctx.addIssue({
        code: 'custom',
        path: ['PUBLIC_BASE_URL'],
        message: 'must be an https URL in production (Twilio posts call details to it)',
      });
    }
    if (env.STRIPE_API_KEY && env.NODE_ENV === 'production') {
      if (!env.STRIPE_API_BASE_URL.startsWith('https://')) {
        ctx.addIssue({
          code: 'custom',
          path: ['STRIPE_API_BASE_URL'],
          message: 'must be an https URL in production (it carries the API key)',
        });
      }
      for (const name of ['STRIPE_CHECKOUT_SUCCESS_URL', 'STRIPE_CHECKOUT_CANCEL_URL'] as const) {
        if (!env[name] && !env.PUBLIC_BASE_URL) {
          ctx.addIssue({
            code: 'custom',
            path: [name],
            message: 'is required in production with STRIPE_API_KEY, unless PUBLIC_BASE_URL is set (Checkout sends payers back there)',
          });
        }
      }
    }
    if (env.LLM_BASE_URL && !env.LLM_MODEL) {
      ctx.addIssue({
        code: 'custom',
        path: ['LLM_MODEL'],
        message: 'is required with LLM_BASE_URL (the model the built-in agent asks for)',
      });
    }
    if (env.GRAPHIQL && env.GRAPHQL_TRUSTED_DOCUMENTS) {
      ctx.addIssue({
        code: 'custom',
        path: ['GRAPHIQL'],
        message: 'must be off with GRAPHQL_TRUSTED_DOCUMENTS (GraphiQL sends documents, which are refused)',
      });
    }
    if (env.DATABASE_DIRECT_URL && !env.DATABASE_URL) {
      ctx.addIssue({
        code: 'custom',
        path: ['DATABASE_DIRECT_URL'],
        message: 'needs DATABASE_URL (the pooled connection string it stands beside)',
      });
    }
    if (env.JWT_SECRET && env.JWT_JWKS_URL) {
      ctx.addIssue({ code: 'custom', path: ['JWT_JWKS_URL'], message: 'set JWT_SECRET or JWT_JWKS_URL, not both' });
    }
    if (env.NODE_ENV === 'production' && !env.JWT_SECRET && !env.JWT_JWKS_URL) {
      ctx.addIssue({
        code: 'custom',
        path: ['JWT_SECRET'],
        message: 'is required in production (or set JWT_JWKS_URL)',
      });
    }
  });

export type Env = z.output<typeof envSchema>;

export interface Config {
  env: Env['NODE_ENV'];
  host: string;
  port: number;
  /** Where `npm run worker` serves /healthz, /readyz and /metrics; null: it serves no HTTP. */
  workerPort: number | null;
  databaseUrl: string | undefined;
  /**
   * A direct connection to the server when `databaseUrl` goes through a pooler in transaction mode
   * (PgBouncer): migrations and LISTEN take it, and statements on `databaseUrl` are not prepared.
   */
  databaseDirectUrl: string | undefined;
  /** Sessions the process's main pool opens at most (Prisma and plain SQL); the job engine has its own. */
  databasePoolSize: number;
  /** How long the first connection waits for a PostgreSQL server that is still starting (src/db/connect.ts). */
  databaseConnectTimeoutSeconds: number;
  dataDir: string;
  jwt: {
    /** HS256 secret; in development without configuration, one is generated and kept in the data folder. */
    secret: string | undefined;
    jwksUrl: string | undefined;
    issuer: string | undefined;
    audience: string | undefined;
  };
  graphql: {
    introspection: boolean;
    graphiql: boolean;
    compiledReads: boolean;
    /** When set, the only operations run: requests name one by its hash. */
    trustedDocuments: TrustedDocuments | undefined;
  };
  /** Origins whose pages may call /graphql and /api/v1 from a browser. */
  corsOrigins: CorsOrigins;
  /** Serve the web console at /console/. */
  console: boolean;
  seedDemo: boolean;
  logLevel: Env['LOG_LEVEL'];
  limits: BodyLimits;
  settings: Settings;
  /** Signing secret of the Stripe webhook endpoint; without it /webhooks/stripe answers 503. */
  stripeWebhookSecret: string | undefined;
  /** How /webhooks/retell verifies and applies Retell's events; without a key it answers 503. */
  retellWebhook: RetellWebhookSettings | undefined;
  /** How /webhooks/twilio/voice and /webhooks/twilio/status verify and answer Twilio; unset, they answer 503. */
  twilioWebhook: TwilioWebhookSettings | undefined;
  /** The OpenAI-compatible server the built-in agent answers calls with; unset, its sockets answer 503. */
  llm: LlmServer | undefined;
  /** Whether this process dials (npm start runs one dialer in process; npm run worker runs only that). */
  runDialer: boolean;
  dialer: DialerRuntimeOptions;
  /** How the processes that dial also deliver webhooks. */
  webhooks: WebhookRuntimeOptions;
  /** How the processes that dial also provision agents at the voice provider. */
  provisioning: ProvisioningRuntimeOptions;
  /** How the processes that dial also run retention (partitions made ahead). */
  retention: RetentionRuntimeOptions;
  /** Bearer token /metrics requires; unset, /metrics is open (serve it on an internal network). */
  metricsToken: string | undefined;
  /** Shared between processes: rate limit budgets and live updates; unset, each process keeps its own. */
  redisUrl: string | undefined;
  /** Start of every Redis key and channel name, so that deployments sharing one Redis stay apart. */
  redisPrefix: string;
  rateLimits: RateLimitRules;
  /** On SIGTERM, how long requests in flight may take to finish, and then each shutdown hook. */
  shutdownTimeoutSeconds: number;
  /** A step of the start that takes longer than this prints what it is doing (0: every step does). */
  startupProgressAfterMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  // An empty variable means "not set", as most shells and orchestrators write it.
  const present = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? 'environment');
        // Secrets, and connection strings that may carry passwords, are never echoed.
        const secret = /SECRET|TOKEN|_KEY$|DATABASE_URL|DATABASE_DIRECT_URL|REDIS_URL/.test(name);
        const given = name in present && !secret ? ` (got ${JSON.stringify(present[name])})` : '';
        return `${name} ${issue.message}${given}`;
      }),
    );
  }
  const env = parsed.data;
  const production = env.NODE_ENV === 'production';
  return {
    env: env.NODE_ENV,
    host: env.HOST,
    port: env.PORT,
    workerPort: env.WORKER_PORT,
    databaseUrl: env.DATABASE_URL,
    databaseDirectUrl: env.DATABASE_DIRECT_URL,
    databasePoolSize: env.DATABASE_POOL_SIZE,
    databaseConnectTimeoutSeconds: env.DATABASE_CONNECT_TIMEOUT_SECONDS,
    dataDir: env.DATA_DIR,
    jwt: { secret: env.JWT_SECRET, jwksUrl: env.JWT_JWKS_URL, issuer: env.JWT_ISSUER, audience: env.JWT_AUDIENCE },
    graphql: {
      introspection: env.GRAPHQL_INTROSPECTION ?? !production,
      graphiql: env.GRAPHIQL ?? (!production && !env.GRAPHQL_TRUSTED_DOCUMENTS),
      compiledReads: env.GRAPHQL_COMPILED_READS ?? true,
      trustedDocuments: env.GRAPHQL_TRUSTED_DOCUMENTS,
    },
    corsOrigins: env.CORS_ORIGINS ?? (production ? [] : '*'),
    console: env.CONSOLE ?? !production,
    seedDemo: env.SEED_DEMO ?? !production,
    logLevel: env.LOG_LEVEL,
    limits: { maxBodyBytes: env.MAX_BODY_BYTES, maxImportBodyBytes: env.MAX_IMPORT_BODY_BYTES },
    settings: {
      importMaxRows: env.IMPORT_MAX_ROWS,
      callRateCentsPerMinute: env.CALL_RATE_CENTS_PER_MINUTE,
      callHoldMinutes: env.DIALER_HOLD_MINUTES,
      webhookLogRetentionDays: env.WEBHOOK_LOG_RETENTION_DAYS,
      checkout: checkoutOf(env),
      webhooks: { allowPrivateUrls: env.WEBHOOK_ALLOW_PRIVATE_URLS ?? !production },
    },
    stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET,
    retellWebhook: env.RETELL_WEBHOOK_KEY
      ? {
          key: env.RETELL_WEBHOOK_KEY,
          toleranceSeconds: env.RETELL_WEBHOOK_TOLERANCE_SECONDS,
          analysisWaitSeconds: env.RETELL_ANALYSIS_WAIT_SECONDS,
        }
      : undefined,
    twilioWebhook:
      env.TWILIO_AUTH_TOKEN && env.PUBLIC_BASE_URL && env.TWILIO_AGENT_STREAM_URL
        ? { authToken: env.TWILIO_AUTH_TOKEN, publicBaseUrl: env.PUBLIC_BASE_URL, agentStreamUrl: env.TWILIO_AGENT_STREAM_URL }
        : undefined,
    llm:
      env.LLM_BASE_URL && env.LLM_MODEL
        ? { baseUrl: env.LLM_BASE_URL, apiKey: env.LLM_API_KEY, model: env.LLM_MODEL, timeoutMs: env.LLM_TIMEOUT_SECONDS * 1000 }
        : undefined,
    runDialer: env.DIALER === 'on',
    dialer: {
      telephony: telephonyOf(env),
      dialer: {
        ...DEFAULT_DIALER_OPTIONS,
        // A real call may last up to an hour (Retell's default longest call, the time limit we give
        // Twilio's calls), plus ringing.
        leaseSeconds: env.DIALER_LEASE_SECONDS ?? (env.TELEPHONY_PROVIDER === 'simulated' ? 300 : 3_900),
        ticksAtOnce: env.DIALER_TICKS_AT_ONCE,
      },
      sweepSeconds: env.DIALER_SWEEP_SECONDS,
    },
    webhooks: {
      delivery: {
        ...DEFAULT_DELIVERY_OPTIONS,
        timeoutMs: env.WEBHOOK_TIMEOUT_SECONDS * 1000,
        retryWindowMs: env.WEBHOOK_RETRY_HOURS * 3_600_000,
        disableAfterMs: env.WEBHOOK_DISABLE_AFTER_DAYS * 86_400_000,
      },
      relayMs: 1_000,
      // An attempt takes at most the timeout and a write; well past it, its worker is taken to have died.
      jobExpireSeconds: env.WEBHOOK_TIMEOUT_SECONDS + 15,
      superviseSeconds: 10,
      concurrency: 20,
    },
    provisioning: {
      voice:
        env.TELEPHONY_PROVIDER === 'retell'
          ? {
              provider: 'retell',
              baseUrl: env.RETELL_BASE_URL,
              apiKey: env.RETELL_API_KEY!,
              timeoutSeconds: env.RETELL_TIMEOUT_SECONDS,
              publicBaseUrl: env.PUBLIC_BASE_URL,
            }
          : { provider: 'simulated' },
      relayMs: 1_000,
      retryLimit: env.AGENT_PROVISIONING_RETRIES,
      retryDelaySeconds: 2,
      // A job makes a few requests, each bounded by the timeout.
      jobExpireSeconds: env.RETELL_TIMEOUT_SECONDS * 20 + 30,
      driftSweepSeconds: env.AGENT_DRIFT_SWEEP_SECONDS,
    },
    retention: { periodSeconds: env.RETENTION_PERIOD_SECONDS },
    metricsToken: env.METRICS_TOKEN,
    redisUrl: env.REDIS_URL,
    redisPrefix: env.REDIS_PREFIX,
    rateLimits: { requests: env.RATE_LIMIT, import: env.RATE_LIMIT_IMPORT, dispatch: env.RATE_LIMIT_DISPATCH },
    shutdownTimeoutSeconds: env.SHUTDOWN_TIMEOUT_SECONDS,
    startupProgressAfterMs: env.STARTUP_PROGRESS_AFTER_MS,
  };
}

/** Stripe Checkout, with a key; the payer comes back to the console's billing page unless URLs are given. */
function checkoutOf(env: Env): CheckoutSettings | undefined {
  if (!env.STRIPE_API_KEY) return undefined;
  // The console routes by the URL's fragment: its billing page is /console/#/billing.
  const console = `${env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT}`}/console/`;
  return {
    apiKey: env.STRIPE_API_KEY,
    apiBaseUrl: env.STRIPE_API_BASE_URL,
    successUrl: env.STRIPE_CHECKOUT_SUCCESS_URL ?? `${console}?checkout=success&session_id={CHECKOUT_SESSION_ID}#/billing`,
    cancelUrl: env.STRIPE_CHECKOUT_CANCEL_URL ?? `${console}?checkout=cancelled#/billing`,
  };
}

function telephonyOf(env: Env): DialerRuntimeOptions['telephony'] {
  switch (env.TELEPHONY_PROVIDER) {
    case 'retell':
      return { provider: 'retell', baseUrl: env.RETELL_BASE_URL, apiKey: env.RETELL_API_KEY!, timeoutSeconds: env.RETELL_TIMEOUT_SECONDS };
    case 'twilio':
      return {
        provider: 'twilio',
        baseUrl: env.TWILIO_API_BASE_URL,
        accountSid: env.TWILIO_ACCOUNT_SID!,
        authToken: env.TWILIO_AUTH_TOKEN!,
        publicBaseUrl: env.PUBLIC_BASE_URL!,
        timeoutSeconds: env.TWILIO_TIMEOUT_SECONDS,
      };
    default:
      return {
        provider: 'simulated',
        seed: env.SIM_SEED,
        timeScale: env.SIM_TIME_SCALE,
        callbackRate: env.SIM_CALLBACK_RATE,
        callLog: env.SIM_CALL_LOG,
      };
  }
}

/** For the entry points: the configuration, or its problems on stderr and exit code 1 (no stack trace). */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}
