import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startDialer, type DialerRuntime } from '../src/jobs/dialer.js';
import { createLogger, jobLogger } from '../src/logger.js';
import { defineRoute } from '../src/rest/route.js';
import { v1Routes } from '../src/rest/routes/index.js';
import { systemClock } from '../src/services/context.js';
import { DEFAULT_DIALER_OPTIONS } from '../src/services/dialer/options.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, dispatch } from './support/campaigns.js';
import { dialerEnv } from './support/dialer.js';

// Every log line of a request carries its id, on both surfaces; one access line per request; no
// credentials in any line.

type Line = Record<string, any>;

function capture() {
  const lines: Line[] = [];
  const log = createLogger('debug', { write: (chunk: string) => void lines.push(JSON.parse(chunk)) });
  return { log, lines };
}

const probes = [
  defineRoute({
    method: 'GET',
    path: '/probe/service-log/',
    operationId: 'probeServiceLog',
    summary: 'Logs from the service layer',
    tag: 'Probe',
    status: 200,
    response: z.object({ ok: z.boolean() }),
    handler: async (_input, ctx) => {
      ctx.log.info({ authorization: 'Bearer leaked', stripeWebhookSecret: 'whsec_leaked' }, 'service says hello');
      return { ok: true };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/probe/crash/',
    operationId: 'probeCrash',
    summary: 'Fails unexpectedly',
    tag: 'Probe',
    status: 200,
    handler: async () => {
      throw new Error('boom');
    },
  }),
];

describe('request ids and logs', () => {
  const { log, lines } = capture();
  let app: TestApp;
  let token: string;
  let userId: string;

  beforeAll(async () => {
    app = await startTestApp({ log, routes: [...v1Routes, ...probes] });
    userId = '11111111-2222-4333-8444-555555555555';
    token = await app.token(userId);
  });
  afterAll(() => app.close());
  beforeEach(() => void lines.splice(0));

  const linesOf = (requestId: string) => lines.filter((line) => line.requestId === requestId);

  it('generates an id when none is given and returns it, on REST and on GraphQL', async () => {
    const rest = await app.request('GET', '/api/v1/agents/templates/', { token });
    const gql = await app.request('POST', '/graphql', { token, body: { query: '{ agentTemplates { id } }' } });
    for (const response of [rest, gql]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(rest.headers.get('x-request-id')).not.toBe(gql.headers.get('x-request-id'));
  });

  it('keeps a sane incoming X-Request-Id and replaces one that is not', async () => {
    const kept = await app.request('GET', '/healthz', { headers: { 'x-request-id': 'lb-7f3a.42:abc_DEF' } });
    expect(kept.headers.get('x-request-id')).toBe('lb-7f3a.42:abc_DEF');
    for (const bad of ['has spaces in it', 'x'.repeat(129), 'quote"d', '']) {
      const replaced = await app.request('GET', '/healthz', { headers: { 'x-request-id': bad } });
      expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('writes one access line per request: method, path without the query, status, duration, user', async () => {
    const res = await app.request('GET', '/api/v1/agents/templates/?token=query-secret', {
      token,
      headers: { 'x-request-id': 'access-1' },
    });
    expect(res.status).toBe(200);
    const access = linesOf('access-1').filter((line) => line.msg === 'request');
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({
      level: 30,
      method: 'GET',
      path: '/api/v1/agents/templates/',
      status: 200,
      userId,
      requestId: 'access-1',
    });
    expect(access[0]!.durationMs).toBeGreaterThanOrEqual(0);

    await app.request('GET', '/api/v1/agents/templates/', { headers: { 'x-request-id': 'access-2' } });
    const refused = linesOf('access-2');
    expect(refused).toEqual([expect.objectContaining({ msg: 'request', status: 401 })]);
    expect(refused[0]).not.toHaveProperty('userId');
  });

  it('puts the request id on service log lines, with the user', async () => {
    await app.request('GET', '/api/v1/probe/service-log/', { token, headers: { 'x-request-id': 'service-1' } });
    const line = linesOf('service-1').find((l) => l.msg === 'service says hello');
    expect(line).toMatchObject({ requestId: 'service-1', userId });
  });

  it('puts the request id on error lines of both surfaces', async () => {
    const crash = await app.request('GET', '/api/v1/probe/crash/', { token, headers: { 'x-request-id': 'crash-1' } });
    expect(crash.status).toBe(500);
    expect(linesOf('crash-1').find((l) => l.level === 50)).toMatchObject({ err: expect.objectContaining({ message: 'boom' }) });

    // Yoga's error masking is handed no context: its line must still carry the request's id.
    await app.prisma.$executeRawUnsafe('ALTER TABLE agent_templates RENAME TO agent_templates_gone');
    try {
      const res = await app.request('POST', '/graphql', {
        token,
        headers: { 'x-request-id': 'crash-2' },
        body: { query: '{ agentTemplates { id } }' },
      });
      expect(res.json.errors[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
      expect(linesOf('crash-2').find((l) => l.level === 50)).toMatchObject({ msg: 'unexpected error in GraphQL execution' });
    } finally {
      await app.prisma.$executeRawUnsafe('ALTER TABLE agent_templates_gone RENAME TO agent_templates');
    }
  });

  it('never writes a token or secret', async () => {
    await app.request('GET', '/api/v1/probe/service-log/?token=query-secret', { token, headers: { cookie: 'session=cookie-secret' } });
    await app.request('POST', '/graphql', { token, body: { query: '{ agentTemplates { id } }' } });
    const text = lines.map((line) => JSON.stringify(line)).join('\n');
    expect(text).toContain('service says hello');
    for (const secret of [token, 'query-secret', 'cookie-secret', 'Bearer leaked', 'whsec_leaked']) expect(text).not.toContain(secret);
  });
});

describe('a dispatch’s request id in the dialer’s lines', () => {
  const { log, lines } = capture();
  let app: TestApp;
  let runtime: DialerRuntime;

  beforeAll(async () => {
    app = await startTestApp({
      log,
      dialer: { wake: (id, cause) => runtime.control.wake(id, cause), report: (result) => runtime.control.report(result) },
    });
    runtime = await startDialer({ ...dialerEnv(app, systemClock), log }, app.db, {
      telephony: { provider: 'simulated', seed: 'request-logs', timeScale: 0 },
      dialer: DEFAULT_DIALER_OPTIONS,
      sweepSeconds: 3_600,
    });
  });
  afterAll(async () => {
    await runtime.stop();
    await app.close();
  });

  it('follows the dispatch into the job that dials the campaign', async () => {
    const who = await customer(app, { contacts: 3 });
    const { id } = await createCampaign(app, who, {
      calling_hours: { start: '00:00', end: '24:00' },
      active_days: [1, 2, 3, 4, 5, 6, 7],
      regional_rules: false,
    });
    const res = await dispatch(app, who.token, id, { triggered_by: 'tests' }, { 'x-request-id': 'dispatch-4711' });
    expect(res.status).toBe(202);
    const deadline = Date.now() + 30_000;
    const ticked = () => lines.find((line) => line.msg === 'dialer tick' && line.campaignId === id && line.placed > 0);
    while (!ticked() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ticked()).toMatchObject({ requestId: 'dispatch-4711', job: 'dialer-wake', jobId: expect.any(String) });
  }, 40_000);
});

describe('logger', () => {
  it('redacts credentials wherever they sit', () => {
    const { log, lines } = capture();
    log.info({
      headers: { authorization: 'Bearer a', cookie: 'c', 'stripe-signature': 's', 'x-retell-signature': 'r' },
      token: 't',
      jwt: { secret: 'j' },
      config: {
        databaseUrl: 'postgresql://u:pw@h/db',
        redisUrl: 'redis://:pw@h',
        metricsToken: 'm',
        retellWebhook: { key: 'k' },
        telephony: { apiKey: 'a' },
      },
    });
    expect(lines[0]).toMatchObject({
      headers: { authorization: '[redacted]', cookie: '[redacted]', 'stripe-signature': '[redacted]', 'x-retell-signature': '[redacted]' },
      token: '[redacted]',
      jwt: { secret: '[redacted]' },
      config: {
        databaseUrl: '[redacted]',
        redisUrl: '[redacted]',
        metricsToken: '[redacted]',
        retellWebhook: { key: '[redacted]' },
        telephony: { apiKey: '[redacted]' },
      },
    });
  });

  it('gives background jobs their own ids, and the id of the request that caused them', () => {
    const { log, lines } = capture();
    jobLogger(log, { name: 'dial', id: 'job-1', requestId: 'req-9' }).info('dialing');
    jobLogger(log, { name: 'sweep', id: 'job-2' }).info('sweeping');
    expect(lines[0]).toMatchObject({ job: 'dial', jobId: 'job-1', requestId: 'req-9', msg: 'dialing' });
    expect(lines[1]).toMatchObject({ job: 'sweep', jobId: 'job-2', msg: 'sweeping' });
    expect(lines[1]).not.toHaveProperty('requestId');
  });
});
