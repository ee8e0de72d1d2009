import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { resolveJwtSecret } from '../src/db/dev-secret.js';
import { configProblems } from './support/config.js';

describe('configuration', () => {
  it('boots with nothing set: development, port 4000, embedded database in ./.data', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      env: 'development',
      port: 4000,
      databaseUrl: undefined,
      dataDir: './.data',
      seedDemo: true,
      graphql: { introspection: true, graphiql: true, compiledReads: true },
    });
  });

  it('waits 30 s for a PostgreSQL server that is still starting unless told otherwise', () => {
    expect(loadConfig({}).databaseConnectTimeoutSeconds).toBe(30);
    expect(loadConfig({ DATABASE_CONNECT_TIMEOUT_SECONDS: '0' }).databaseConnectTimeoutSeconds).toBe(0);
    expect(configProblems({ DATABASE_CONNECT_TIMEOUT_SECONDS: 'soon' })).toEqual([
      'DATABASE_CONNECT_TIMEOUT_SECONDS must be a whole number from 0 to 3600 (got "soon")',
    ]);
  });

  it('opens a pool of 10 sessions unless DATABASE_POOL_SIZE says otherwise, from 1 to 1000', () => {
    expect(loadConfig({}).databasePoolSize).toBe(10);
    expect(loadConfig({ DATABASE_POOL_SIZE: '40' }).databasePoolSize).toBe(40);
    expect(configProblems({ DATABASE_POOL_SIZE: '0' })).toEqual(['DATABASE_POOL_SIZE must be at least 1 (got "0")']);
    expect(configProblems({ DATABASE_POOL_SIZE: '5000' })).toEqual(['DATABASE_POOL_SIZE must be at most 1000 (got "5000")']);
    expect(configProblems({ DATABASE_POOL_SIZE: 'many' })).toEqual([
      'DATABASE_POOL_SIZE must be a whole number from 1 to 1000 (got "many")',
    ]);
  });

  it('takes a direct database URL only beside DATABASE_URL, and never echoes it', () => {
    const direct = 'postgresql://app:secret@db:5432/callflow';
    expect(
      loadConfig({ DATABASE_URL: 'postgresql://app:secret@pgbouncer:6432/callflow', DATABASE_DIRECT_URL: direct }).databaseDirectUrl,
    ).toBe(direct);
    expect(loadConfig({}).databaseDirectUrl).toBeUndefined();
    expect(configProblems({ DATABASE_DIRECT_URL: direct })).toEqual([
      'DATABASE_DIRECT_URL needs DATABASE_URL (the pooled connection string it stands beside)',
    ]);
    expect(configProblems({ DATABASE_URL: direct, DATABASE_DIRECT_URL: 'mysql://app:secret@db' })).toEqual([
      'DATABASE_DIRECT_URL must be a postgres:// or postgresql:// connection string',
    ]);
  });

  it("serves the worker's operations endpoints on port 4001 unless told another, 0 (any free one) or off", () => {
    expect(loadConfig({}).workerPort).toBe(4001);
    expect(loadConfig({ WORKER_PORT: '9464' }).workerPort).toBe(9464);
    expect(loadConfig({ WORKER_PORT: '0' }).workerPort).toBe(0);
    expect(loadConfig({ WORKER_PORT: 'off' }).workerPort).toBeNull();
    for (const bad of ['70000', 'none', '-1']) {
      expect(configProblems({ WORKER_PORT: bad })).toEqual([`WORKER_PORT must be a port number from 0 to 65535, or off (got "${bad}")`]);
    }
  });

  it('reports one clear message per bad value, all at once', () => {
    const found = configProblems({ PORT: 'eighty', DATABASE_URL: 'mysql://x', JWT_SECRET: 'short', LOG_LEVEL: 'loud' });
    expect(found).toHaveLength(4);
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^PORT must be a whole number from 0 to 65535 \(got "eighty"\)$/),
        expect.stringMatching(/^DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ connection string/),
        expect.stringMatching(/^JWT_SECRET must be at least 32 characters long$/),
        expect.stringMatching(/^LOG_LEVEL /),
      ]),
    );
    // A secret is never echoed back.
    expect(found.join('\n')).not.toContain('short');
  });

  it('refuses production without JWT_SECRET or JWT_JWKS_URL', () => {
    expect(configProblems({ NODE_ENV: 'production' })).toEqual(['JWT_SECRET is required in production (or set JWT_JWKS_URL)']);
    expect(configProblems({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) })).toEqual([]);
    expect(configProblems({ NODE_ENV: 'production', JWT_JWKS_URL: 'https://id.example.test/.well-known/jwks.json' })).toEqual([]);
  });

  it('turns introspection, GraphiQL and demo data off in production unless asked for', () => {
    const config = loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) });
    expect(config.graphql).toEqual({ introspection: false, graphiql: false, compiledReads: true });
    expect(config.seedDemo).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), GRAPHQL_INTROSPECTION: 'true' }).graphql.introspection).toBe(
      true,
    );
  });

  it('allows browsers from any origin in development, from none in production unless listed', () => {
    expect(loadConfig({}).corsOrigins).toBe('*');
    expect(loadConfig({ NODE_ENV: 'test' }).corsOrigins).toBe('*');
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) };
    expect(loadConfig(production).corsOrigins).toEqual([]);
    expect(loadConfig({ ...production, CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    expect(loadConfig({ ...production, CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com' }).corsOrigins).toEqual(['https://app.example.com']);
    for (const bad of [
      'https://app.example.com/',
      'app.example.com',
      'https://App.example.com',
      'https://app.example.com,*',
      'ftp://files.example.com',
      'https://u:p@app.example.com',
    ]) {
      expect(configProblems({ CORS_ORIGINS: bad })).toEqual([
        `CORS_ORIGINS must be * or origins separated by commas, each like https://app.example.com (no path, no trailing slash) (got ${JSON.stringify(bad)})`,
      ]);
    }
  });

  it('refuses a secret and a JWKS at once', () => {
    expect(configProblems({ JWT_SECRET: 'x'.repeat(32), JWT_JWKS_URL: 'https://id.example.test/jwks' })).toEqual([
      'JWT_JWKS_URL set JWT_SECRET or JWT_JWKS_URL, not both (got "https://id.example.test/jwks")',
    ]);
  });

  it("reads the webhook log's retention: 90 days unless set, from a week to five years", () => {
    expect(loadConfig({}).settings.webhookLogRetentionDays).toBe(90);
    expect(loadConfig({ WEBHOOK_LOG_RETENTION_DAYS: '30' }).settings.webhookLogRetentionDays).toBe(30);
    expect(configProblems({ WEBHOOK_LOG_RETENTION_DAYS: '6' })).toEqual(['WEBHOOK_LOG_RETENTION_DAYS must be at least 7 (got "6")']);
    expect(configProblems({ WEBHOOK_LOG_RETENTION_DAYS: '1826' })).toEqual([
      'WEBHOOK_LOG_RETENTION_DAYS must be at most 1825 (got "1826")',
    ]);
  });

  it('reads billing settings: a call rate of 10 cents a minute unless set, and a Stripe signing secret', () => {
    expect(loadConfig({}).settings.callRateCentsPerMinute).toBe(10);
    expect(loadConfig({}).stripeWebhookSecret).toBeUndefined();
    const configured = loadConfig({ CALL_RATE_CENTS_PER_MINUTE: '15', STRIPE_WEBHOOK_SECRET: 'whsec_abc123' });
    expect(configured.settings.callRateCentsPerMinute).toBe(15);
    expect(configured.stripeWebhookSecret).toBe('whsec_abc123');
    const found = configProblems({ CALL_RATE_CENTS_PER_MINUTE: '0', STRIPE_WEBHOOK_SECRET: 'sk_live_oops' });
    expect(found).toEqual([
      'CALL_RATE_CENTS_PER_MINUTE must be at least 1 (got "0")',
      'STRIPE_WEBHOOK_SECRET must be a Stripe signing secret (whsec_...)',
    ]);
    expect(configProblems({ CALL_RATE_CENTS_PER_MINUTE: '2.5' })).toEqual([
      'CALL_RATE_CENTS_PER_MINUTE must be a whole number from 1 to 100000 (got "2.5")',
    ]);
  });

  it('opens Stripe Checkout only with an API key, sending payers back to the console unless told otherwise', () => {
    expect(loadConfig({}).settings.checkout).toBeUndefined();
    expect(loadConfig({ STRIPE_API_KEY: 'sk_test_abc123', PORT: '4100' }).settings.checkout).toEqual({
      apiKey: 'sk_test_abc123',
      apiBaseUrl: 'https://api.stripe.com',
      successUrl: 'http://localhost:4100/console/?checkout=success&session_id={CHECKOUT_SESSION_ID}#/billing',
      cancelUrl: 'http://localhost:4100/console/?checkout=cancelled#/billing',
    });
    const behindProxy = loadConfig({ STRIPE_API_KEY: 'rk_live_abc', PUBLIC_BASE_URL: 'https://calls.example.com/' });
    expect(behindProxy.settings.checkout?.cancelUrl).toBe('https://calls.example.com/console/?checkout=cancelled#/billing');
    const given = loadConfig({
      STRIPE_API_KEY: 'sk_test_abc123',
      STRIPE_API_BASE_URL: 'http://127.0.0.1:12111',
      STRIPE_CHECKOUT_SUCCESS_URL: 'https://app.example.com/paid',
      STRIPE_CHECKOUT_CANCEL_URL: 'https://app.example.com/billing',
    }).settings.checkout;
    expect(given).toMatchObject({ apiBaseUrl: 'http://127.0.0.1:12111', successUrl: 'https://app.example.com/paid' });

    expect(configProblems({ STRIPE_API_KEY: 'pk_live_publishable' })).toEqual([
      'STRIPE_API_KEY must be a Stripe secret or restricted key (sk_... or rk_...)',
    ]);
    expect(
      configProblems({
        NODE_ENV: 'production',
        JWT_SECRET: 'x'.repeat(32),
        STRIPE_API_KEY: 'sk_live_abc',
        STRIPE_API_BASE_URL: 'http://stripe.internal',
      }),
    ).toEqual([
      'STRIPE_API_BASE_URL must be an https URL in production (it carries the API key) (got "http://stripe.internal")',
      'STRIPE_CHECKOUT_SUCCESS_URL is required in production with STRIPE_API_KEY, unless PUBLIC_BASE_URL is set (Checkout sends payers back there)',
      'STRIPE_CHECKOUT_CANCEL_URL is required in production with STRIPE_API_KEY, unless PUBLIC_BASE_URL is set (Checkout sends payers back there)',
    ]);
  });

  it('reads a metrics token, never echoing a bad one', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: 'scrape-token-0123456789' }).metricsToken).toBe('scrape-token-0123456789');
    expect(configProblems({ METRICS_TOKEN: 'short' })).toEqual(['METRICS_TOKEN must be at least 16 characters, without spaces']);
  });

  it('reads per-user rate limits as requests/seconds or off, and a Redis URL it never echoes', () => {
    const defaults = loadConfig({});
    expect(defaults.rateLimits).toEqual({
      requests: { points: 600, durationSeconds: 60 },
      import: { points: 10, durationSeconds: 60 },
      dispatch: { points: 30, durationSeconds: 60 },
    });
    expect(defaults.redisUrl).toBeUndefined();
    expect(defaults.redisPrefix).toBe('callflow');
    const configured = loadConfig({
      RATE_LIMIT: 'off',
      RATE_LIMIT_IMPORT: '5/3600',
      REDIS_URL: 'redis://:pw@cache:6379/2',
      REDIS_PREFIX: 'staging:callflow',
    });
    expect(configured.rateLimits.requests).toBeNull();
    expect(configured.rateLimits.import).toEqual({ points: 5, durationSeconds: 3600 });
    expect(configured.redisUrl).toBe('redis://:pw@cache:6379/2');
    expect(configured.redisPrefix).toBe('staging:callflow');
    expect(
      configProblems({
        RATE_LIMIT: 'fast',
        RATE_LIMIT_DISPATCH: '0/60',
        REDIS_URL: 'http://:pw@cache',
        REDIS_PREFIX: 'a b',
        DATABASE_URL: 'mysql://u:pw@h',
      }),
    ).toEqual([
      'DATABASE_URL must be a postgres:// or postgresql:// connection string',
      'REDIS_URL must be a redis:// or rediss:// URL',
      'REDIS_PREFIX must be 1 to 64 letters, digits, ".", "_", ":" or "-" (got "a b")',
      'RATE_LIMIT must be requests/seconds (like 600/60) or off (got "fast")',
      'RATE_LIMIT_DISPATCH must be requests/seconds (like 600/60) or off (got "0/60")',
    ]);
  });

  it('runs the built-in agent only with an LLM server and a model; the key is optional and never echoed', () => {
    expect(loadConfig({}).llm).toBeUndefined();
    expect(loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:11434/v1', LLM_MODEL: 'llama3.1' }).llm).toEqual({
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: undefined,
      model: 'llama3.1',
      timeoutMs: 8_000,
    });
    expect(
      loadConfig({ LLM_BASE_URL: 'https://api.openai.com/v1', LLM_API_KEY: 'sk-test', LLM_MODEL: 'gpt-4o-mini', LLM_TIMEOUT_SECONDS: '5' })
        .llm,
    ).toMatchObject({ apiKey: 'sk-test', timeoutMs: 5_000 });
    expect(configProblems({ LLM_BASE_URL: 'http://127.0.0.1:11434/v1' })).toEqual([
      'LLM_MODEL is required with LLM_BASE_URL (the model the built-in agent asks for)',
    ]);
    const found = configProblems({ LLM_BASE_URL: 'ftp://x', LLM_API_KEY: 'has space', LLM_MODEL: 'm', LLM_TIMEOUT_SECONDS: '0' });
    expect(found).toEqual([
      expect.stringMatching(/^LLM_BASE_URL must be the http\(s\) URL of an OpenAI-compatible API/),
      'LLM_API_KEY must be an API key without spaces',
      'LLM_TIMEOUT_SECONDS must be at least 1 (got "0")',
    ]);
  });

  it('dials through the simulator unless told otherwise, with a five-minute lease', () => {
    const config = loadConfig({});
    expect(config.dialer.telephony).toEqual({ provider: 'simulated', seed: 'demo', timeScale: 0.1, callbackRate: 0 });
    expect(config.dialer.dialer.leaseSeconds).toBe(300);
    expect(config.retellWebhook).toBeUndefined();
  });

  it('dials through Retell with an API key and a webhook key, never echoing either', () => {
    const keys = { RETELL_API_KEY: 'key_api_0123456789', RETELL_WEBHOOK_KEY: 'key_webhook_0123456789' };
    const config = loadConfig({ TELEPHONY_PROVIDER: 'retell', ...keys });
    expect(config.dialer.telephony).toEqual({
      provider: 'retell',
      baseUrl: 'https://api.retellai.com',
      apiKey: keys.RETELL_API_KEY,
      timeoutSeconds: 10,
    });
    expect(config.retellWebhook).toEqual({ key: keys.RETELL_WEBHOOK_KEY, toleranceSeconds: 300, analysisWaitSeconds: 300 });
    // A real call may last an hour: its lease covers that unless set.
    expect(config.dialer.dialer.leaseSeconds).toBe(3_900);
    expect(loadConfig({ TELEPHONY_PROVIDER: 'retell', ...keys, DIALER_LEASE_SECONDS: '600' }).dialer.dialer.leaseSeconds).toBe(600);

    expect(configProblems({ TELEPHONY_PROVIDER: 'retell' })).toEqual([
      'RETELL_API_KEY is required with TELEPHONY_PROVIDER=retell',
      'RETELL_WEBHOOK_KEY is required with TELEPHONY_PROVIDER=retell',
    ]);
    expect(configProblems({ TELEPHONY_PROVIDER: 'vonage' })).toEqual([
      'TELEPHONY_PROVIDER must be simulated, retell or twilio (got "vonage")',
    ]);
    const found = configProblems({
      TELEPHONY_PROVIDER: 'retell',
      RETELL_API_KEY: 'has space',
      RETELL_WEBHOOK_KEY: 'short',
      RETELL_BASE_URL: 'ftp://x',
    });
    expect(found).toEqual([
      'RETELL_BASE_URL must be an http(s) URL (got "ftp://x")',
      'RETELL_API_KEY must be a Retell API key (8+ characters, no spaces)',
      'RETELL_WEBHOOK_KEY must be the Retell API key that signs webhooks (8+ characters, no spaces)',
    ]);
  });

  it('refuses Retell in production over plain http, where the API key would travel in clear', () => {
    const production = {
      NODE_ENV: 'production',
      JWT_SECRET: 'x'.repeat(32),
      TELEPHONY_PROVIDER: 'retell',
      RETELL_API_KEY: 'key_api_0123456789',
      RETELL_WEBHOOK_KEY: 'key_webhook_0123456789',
    };
    expect(configProblems(production)).toEqual([]);
    expect(configProblems({ ...production, RETELL_BASE_URL: 'http://retell.internal' })).toEqual([
      'RETELL_BASE_URL must be an https URL in production (it carries the API key) (got "http://retell.internal")',
    ]);
    expect(configProblems({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), TELEPHONY_PROVIDER: 'retell' })).toHaveLength(2);
  });

  it('generates a development secret once and keeps it in the data folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'callflow-config-'));
    try {
      const config = loadConfig({ DATA_DIR: join(dir, 'nested', 'data') });
      const first = await resolveJwtSecret(config);
      const second = await resolveJwtSecret(config);
      expect(first).toHaveLength(64);
      expect(second).toBe(first);
      const file = join(dir, 'nested', 'data', 'jwt-secret');
      expect((await readFile(file, 'utf8')).trim()).toBe(first);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(await resolveJwtSecret(loadConfig({ DATA_DIR: dir, JWT_SECRET: 'y'.repeat(40) }))).toBe('y'.repeat(40));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
