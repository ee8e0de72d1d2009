import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { createRateLimiter } from '../src/ops/rate-limits.js';
import { RateLimitedError } from '../src/services/errors.js';
import { startTestApp, type TestApp } from './support/app.js';
import { CAMPAIGN_UPDATED } from './support/live.js';
import { subscribe } from './support/sse.js';

// Per-user budgets on both surfaces: a general one for every request, and tighter ones that imports
// (and dispatch) declare. Small budgets over 4-second windows, so that the reset is seen too. Run on
// the in-memory counters and on Redis (at REDIS_TEST_URL, 127.0.0.1:6379 by default).

const REDIS_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';
const WINDOW_SECONDS = 4;

/**
 * Five requests at once: a burst within one window, however slow the machine, which the budget of four
 * lets four through and refuses once. Returns the refused one and the others.
 */
async function burst<T extends { status: number }>(send: () => Promise<T>) {
  const answers = await Promise.all(Array.from({ length: 5 }, send));
  expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 429]);
  return { refused: answers.find((a) => a.status === 429)!, passed: answers.filter((a) => a.status === 200) };
}

async function keysOf(prefix: string) {
  const redis = new Redis(REDIS_URL);
  try {
    return await redis.keys(`${prefix}:*`);
  } finally {
    redis.disconnect();
  }
}

async function deleteKeys(prefix: string) {
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  return keys;
}

const IMPORT = `mutation($name: String!) { importContacts(input: { groupName: $name, rows: [{ Phone: "+14155550142" }] }) { success } }`;
const IMPORT_TWICE = `mutation($name: String!) {
  a: importContacts(input: { groupName: $name, rows: [{ Phone: "+14155550142" }] }) { success }
  b: importContacts(input: { groupName: $name, rows: [{ Phone: "+14155550143" }] }) { success } }`;

describe.each([
  { backend: 'memory', redis: false },
  { backend: 'Redis', redis: true },
])('rate limits ($backend)', ({ redis }) => {
  const keyPrefix = `test:ratelimit:${randomUUID()}`;
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({
      rateLimits: {
        requests: { points: 4, durationSeconds: WINDOW_SECONDS },
        import: { points: 1, durationSeconds: WINDOW_SECONDS },
        ...(redis ? { redisUrl: REDIS_URL, keyPrefix } : {}),
      },
    });
    // Until its connection is ready the limiter counts in memory (its insurance limiter), and a burst that
    // straddles the moment would be counted half in each: wait until a request's budget shows in Redis.
    for (let i = 0; redis && i < 100 && (await keysOf(keyPrefix)).length === 0; i += 1) {
      await app.request('GET', '/api/v1/agents/active/', { token: await app.token() });
      await sleep(100);
    }
  });
  afterAll(async () => {
    await app.close();
    await deleteKeys(keyPrefix);
  });

  it('REST: 429 with Retry-After and a DRF body past the budget, per user, and a fresh budget after the window', async () => {
    const token = await app.token();
    const { refused } = await burst(() => app.request('GET', '/api/v1/agents/active/', { token }));
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(refused.json).toEqual({ detail: `Request was throttled. Expected available in ${retryAfter} seconds.` });

    expect((await app.request('GET', '/api/v1/agents/active/', { token: await app.token() })).status).toBe(200);

    await sleep(retryAfter * 1000 + 100);
    expect((await app.request('GET', '/api/v1/agents/active/', { token })).status).toBe(200);
  });

  it('REST: an import also spends the tighter import budget', async () => {
    const token = await app.token();
    const body = { groupName: 'First', csvData: [{ Phone: '+14155550142' }] };
    expect((await app.request('POST', '/api/v1/contacts/import/', { token, body })).status).toBe(201);
    const refused = await app.request('POST', '/api/v1/contacts/import/', { token, body: { ...body, groupName: 'Second' } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(WINDOW_SECONDS);
    // Other endpoints still have budget.
    expect((await app.request('GET', '/api/v1/agents/active/', { token })).status).toBe(200);

    await sleep(Number(refused.headers.get('retry-after')) * 1000 + 100);
    expect((await app.request('POST', '/api/v1/contacts/import/', { token, body: { ...body, groupName: 'Third' } })).status).toBe(201);
  });

  it('REST: an import refused for its input gives its import budget back', async () => {
    const token = await app.token();
    const bad = await app.request('POST', '/api/v1/contacts/import/', { token, body: { groupName: '', csvData: [{ Phone: '1' }] } });
    expect(bad.status).toBe(400);
    const noRows = await app.request('POST', '/api/v1/contacts/import/', { token, body: { groupName: 'Empty', csvData: [] } });
    expect(noRows.status).toBe(400);
    const fixed = await app.request('POST', '/api/v1/contacts/import/', {
      token,
      body: { groupName: 'Fixed', csvData: [{ Phone: '+14155550142' }] },
    });
    expect(fixed.status).toBe(201);
    // The one import of the window is spent now.
    const again = await app.request('POST', '/api/v1/contacts/import/', { token, body: { groupName: '', csvData: [] } });
    expect(again.status).toBe(429);
  });

  it('GraphQL: an import refused for its input gives its import budget back', async () => {
    const token = await app.token();
    const bad = await app.gql(IMPORT, { name: '' }, token);
    expect(bad.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    const fixed = await app.gql(IMPORT, { name: 'Fixed' }, token);
    expect(fixed.errors).toBeUndefined();
    expect(fixed.data.importContacts.success).toBe(true);
    const again = await app.gql(IMPORT, { name: 'Again' }, token);
    expect(again.errors![0]!.extensions!.code).toBe('RATE_LIMITED');
  });

  it('GraphQL: RATE_LIMITED with HTTP 429 and Retry-After past the general budget', async () => {
    const token = await app.token();
    const { refused } = await burst(() => app.request('POST', '/graphql', { token, body: { query: '{ agentTemplates { id } }' } }));
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(refused.json.data).toBeUndefined();
    expect(refused.json.errors).toEqual([
      {
        message: `Request was throttled. Expected available in ${retryAfter} seconds.`,
        extensions: { code: 'RATE_LIMITED', retryAfterSeconds: retryAfter },
      },
    ]);

    await sleep(retryAfter * 1000 + 100);
    expect((await app.gql('{ agentTemplates { id } }', {}, token)).status).toBe(200);
  });

  it('GraphQL: importContacts spends the import budget once per field, aliases included', async () => {
    const token = await app.token();
    const twice = await app.gql(IMPORT_TWICE, { name: 'Twice' }, token);
    expect(twice.status).toBe(429);
    expect(twice.errors![0]!.extensions!.code).toBe('RATE_LIMITED');
    // Refused before running: nothing was imported.
    expect((await app.gql('{ contactGroups(first: 5) { totalCount } }', {}, token)).data.contactGroups.totalCount).toBe(0);

    await sleep(WINDOW_SECONDS * 1000 + 100);
    const once = await app.gql(IMPORT, { name: 'Once' }, token);
    expect(once.errors).toBeUndefined();
    expect(once.data.importContacts.success).toBe(true);
  });

  it('GraphQL: a subscription spends one request when it opens', async () => {
    const token = await app.token();
    const open = async () => {
      const subscription = await subscribe(app.url, CAMPAIGN_UPDATED, { id: randomUUID() }, token);
      await subscription.ended;
      return subscription;
    };
    const { refused, passed } = await burst(open);
    for (const subscription of passed) expect(subscription.results[0]!.errors![0]!.extensions!.code).toBe('NOT_FOUND');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'RATE_LIMITED' });
  });
});

describe('rate limits kept in Redis', () => {
  // An hour's window so that the keys cannot expire before they are read. Until the connection is ready
  // the limiter counts in memory (its insurance), so requests are made until the first reaches Redis.
  it.each([
    { backend: 'memory', redis: false },
    { backend: 'Redis', redis: true },
  ])('keeps the budgets in Redis, and only there in the Redis run ($backend)', async ({ redis }) => {
    const keyPrefix = `test:ratelimit:${randomUUID()}`;
    const limiter = createRateLimiter(
      { requests: { points: 1000, durationSeconds: 3600 }, import: null, dispatch: null },
      { redisUrl: redis ? REDIS_URL : undefined, keyPrefix, log: createLogger('silent') },
    );
    try {
      let keys: string[] = [];
      for (let i = 0; i < (redis ? 50 : 1) && keys.length === 0; i += 1) {
        await limiter.consume('user-1');
        keys = await deleteKeys(keyPrefix);
        if (keys.length === 0) await sleep(100);
      }
      expect(keys.length > 0).toBe(redis);
    } finally {
      await limiter.close();
    }
  });
});

describe('rate limits while Redis is unreachable', () => {
  it('keeps counting in memory instead of failing requests', async () => {
    const limiter = createRateLimiter(
      { requests: { points: 2, durationSeconds: 60 }, import: null, dispatch: null },
      { redisUrl: 'redis://127.0.0.1:1', log: createLogger('silent') },
    );
    try {
      await limiter.consume('user-1');
      await limiter.consume('user-1');
      await expect(limiter.consume('user-1')).rejects.toBeInstanceOf(RateLimitedError);
      await limiter.consume('user-2');
    } finally {
      await limiter.close();
    }
  });
});
