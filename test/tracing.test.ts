import { createServer, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDialer } from '../src/jobs/dialer.js';
import { startWebhookDelivery } from '../src/jobs/webhooks.js';
import { flushTracing, shutdownTracing, startTracing, tracingConfigured, tracingOn } from '../src/ops/tracing.js';
import { systemClock } from '../src/services/context.js';
import { DEFAULT_DIALER_OPTIONS } from '../src/services/dialer/options.js';
import { defaultSettings } from '../src/services/settings.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, runningCampaign } from './support/dialer.js';
import { CREATE_AGENT, nextPhoneNumber, templateId } from './support/fixtures.js';
import { startReceiver } from './support/receiver.js';
import { waitFor } from './support/wait.js';

// Tracing through the real app, dialer and webhook delivery, with the spans kept in memory; then once
// more through the OTLP exporter to a local collector. Tracing is global to the process: this file
// starts it itself and shuts it down at the end (vitest runs each file in a process of its own).

const OTEL_SETTINGS = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_SDK_DISABLED',
  'OTEL_SERVICE_NAME',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
];
const saved = Object.fromEntries(OTEL_SETTINGS.map((name) => [name, process.env[name]]));
for (const name of OTEL_SETTINGS) delete process.env[name];

const sdkModules = () =>
  Object.keys(createRequire(import.meta.url).cache).filter((path) => /@opentelemetry\/(sdk-|exporter-|resources|context-)/.test(path));

describe('with no OTEL settings', () => {
  it('loads no SDK and traces nothing', async () => {
    expect(await startTracing()).toBe(false);
    expect(tracingOn()).toBe(false);
    expect(sdkModules()).toEqual([]);
    const span = trace.getTracer('probe').startSpan('probe');
    expect(span.isRecording()).toBe(false);
    span.end();
  });

  it('turns on with an OTLP endpoint unless the SDK is disabled', () => {
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingConfigured({ OTEL_SERVICE_NAME: 'callflow' })).toBe(false);
  });
});

describe('with tracing on', () => {
  let exporter: InMemorySpanExporter;
  let app: TestApp;
  beforeAll(async () => {
    const { InMemorySpanExporter } = await import('@opentelemetry/sdk-trace-base');
    exporter = new InMemorySpanExporter();
    expect(await startTracing({ exporter })).toBe(true);
    // The first test's check does see the SDK once it is loaded.
    expect(sdkModules().length).toBeGreaterThan(0);
    app = await startTestApp({ settings: { webhooks: { allowPrivateUrls: true } } });
  });
  afterAll(async () => {
    await app.close();
    await shutdownTracing();
    for (const [name, value] of Object.entries(saved)) if (value !== undefined) process.env[name] = value;
  });

  const spans = () => exporter.getFinishedSpans();
  const childrenOf = (parent: ReadableSpan) => spans().filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
  const inTrace = (root: ReadableSpan) => spans().filter((s) => s.spanContext().traceId === root.spanContext().traceId);
  const sql = (s: ReadableSpan) => s.attributes['db.system'] === 'postgresql';

  /** The server span of the one request that carried this marker in its traceparent's trace id. */
  async function requestSpan(traceId: string) {
    return waitFor(
      async () => spans().find((s) => s.kind === SpanKind.SERVER && s.spanContext().traceId === traceId),
      5_000,
      'the request span',
    );
  }

  it('traces a GraphQL operation: request, operation, resolvers and SQL in one trace', async () => {
    exporter.reset();
    const token = await app.token();
    const input = {
      templateId: await templateId(app),
      name: 'Front desk',
      phoneNumber: nextPhoneNumber(),
      variables: { agent_name: 'Sam', company_name: 'Acme Dental' },
    };
    const response = await app.request('POST', '/graphql', { token, body: { query: CREATE_AGENT, variables: { input } } });
    expect(response.json.errors).toBeUndefined();

    const http = await waitFor(async () => spans().find((s) => s.name === 'POST /graphql'), 5_000, 'the request span');
    expect(http.kind).toBe(SpanKind.SERVER);
    expect(http.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/graphql', 'http.response.status_code': 200 });
    expect(http.parentSpanContext).toBeUndefined();

    const [operation] = childrenOf(http).filter((s) => s.name === 'mutation CreateAgent');
    expect(operation?.attributes).toMatchObject({ 'graphql.operation.type': 'mutation', 'graphql.operation.name': 'CreateAgent' });
    const resolver = childrenOf(operation!).find((s) => s.name === 'Mutation.createAgent');
    expect(resolver?.attributes['graphql.field.path']).toBe('createAgent');
    // Exposed columns get no span of their own.
    expect(spans().some((s) => s.name === 'Agent.name')).toBe(false);

    const statements = inTrace(http).filter(sql);
    expect(childrenOf(resolver!).filter(sql).length).toBeGreaterThan(0);
    // Authentication's statements run under the operation, before any resolver.
    expect(childrenOf(operation!).some(sql)).toBe(true);
    for (const statement of statements) {
      expect(statement.kind).toBe(SpanKind.CLIENT);
      expect(statement.attributes['db.system.name']).toBe('postgresql');
      // The text, never the values: the phone number is a parameter.
      expect(String(statement.attributes['db.query.text'])).not.toContain(input.phoneNumber);
    }
  });

  it('marks the operation failed with the errors it answered', async () => {
    exporter.reset();
    const result = await app.gql('query Broken { noSuchField }', {}, await app.token());
    expect(result.errors).toHaveLength(1);
    const http = await waitFor(async () => spans().find((s) => s.name === 'POST /graphql'), 5_000, 'the request span');
    const [operation] = childrenOf(http).filter((s) => s.name === 'query Broken');
    expect(operation?.status).toMatchObject({ code: SpanStatusCode.ERROR });
    expect(operation?.events.map((e) => e.name)).toEqual(['exception']);
  });

  it('traces a v1 request and continues the caller trace', async () => {
    exporter.reset();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const token = await app.token();
    const response = await app.request('GET', '/api/v1/agents/active/', {
      token,
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(response.status).toBe(200);

    const http = await requestSpan(traceId);
    expect(http.name).toBe('GET /api/v1/agents/active/');
    expect(http.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    const statements = childrenOf(http).filter(sql);
    expect(statements.length).toBeGreaterThan(0);
    // Named statements carry their names; Prisma's, the name of the call they belong to.
    expect(statements.every((s) => !s.name.startsWith('prisma '))).toBe(true);
  });

  it('starts a new trace for a malformed traceparent', async () => {
    exporter.reset();
    const response = await app.request('GET', '/healthz', { headers: { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` } });
    expect(response.status).toBe(200);
    const http = await waitFor(async () => spans().find((s) => s.name === 'GET /healthz'), 5_000, 'the request span');
    expect(http.parentSpanContext).toBeUndefined();
    expect(http.spanContext().traceId).not.toBe('0'.repeat(32));
  });

  it('traces dialer ticks with their campaign and the calls they placed', async () => {
    const env = dialerEnv(app, systemClock);
    const runtime = await startDialer(env, app.db, {
      telephony: { provider: 'simulated', seed: 'tracing-test', timeScale: 0 },
      dialer: DEFAULT_DIALER_OPTIONS,
      sweepSeconds: 60,
    });
    try {
      const rows = Array.from({ length: 5 }, (_, i) => ({ Phone: `+1415${6_000_000 + i}` }));
      const setup = await runningCampaign(app, env, { rows, campaign: { scheduleConfig: { max_attempts: 1, max_attempts_per_day: 1 } } });
      exporter.reset();
      await runtime.control.wake(setup.campaignId);
      const ticks = await waitFor(
        async () => {
          const ticks = spans().filter((s) => s.name === 'dialer.tick' && s.attributes['callflow.campaign.id'] === setup.campaignId);
          const placed = ticks.reduce((sum, s) => sum + Number(s.attributes['callflow.dialer.calls_placed']), 0);
          return placed === 5 ? ticks : undefined;
        },
        20_000,
        'ticks that placed every call',
      );
      const tick = ticks.find((s) => Number(s.attributes['callflow.dialer.calls_placed']) > 0)!;
      expect(tick.parentSpanContext).toBeUndefined();
      expect(
        childrenOf(tick)
          .filter(sql)
          .map((s) => s.name),
      ).toContain('dialer.claim');
    } finally {
      await runtime.stop();
    }
  }, 60_000);

  it('traces each webhook delivery attempt as a client span with the status code', async () => {
    const receiver = await startReceiver(() => ({ status: 204 }));
    const env = { ...dialerEnv(app, systemClock), settings: { ...defaultSettings, webhooks: { allowPrivateUrls: true } } };
    const delivery = await startWebhookDelivery(env, app.db, {
      delivery: { timeoutMs: 2_000, retryBaseMs: 100, retryMaxDelayMs: 400, retryWindowMs: 2_000, disableAfterMs: 4_000 },
      relayMs: 50,
      jobExpireSeconds: 5,
      superviseSeconds: 1,
      concurrency: 4,
    });
    try {
      const token = await app.token();
      const created = await app.gql(
        `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } } }`,
        { input: { url: `${receiver.url}/hooks`, eventTypes: ['call.finished'] } },
        token,
      );
      const endpointId = created.data.createWebhookEndpoint.endpoint.id as string;
      await app.gql(`mutation($id: UUID!) { pingWebhookEndpoint(id: $id) { id } }`, { id: endpointId }, token);

      const attempt = await waitFor(async () => spans().find((s) => s.name === 'webhook.deliver'), 20_000, 'the delivery span');
      expect(attempt.kind).toBe(SpanKind.CLIENT);
      // A job's span starts a trace of its own.
      expect(attempt.parentSpanContext).toBeUndefined();
      expect(attempt.attributes).toMatchObject({
        'callflow.webhook.endpoint_id': endpointId,
        'callflow.webhook.event_type': 'webhook.ping',
        'callflow.webhook.attempt': 1,
        'callflow.webhook.outcome': 'delivered',
        'http.response.status_code': 204,
        'server.address': '127.0.0.1',
      });
      expect(receiver.received).toHaveLength(1);
    } finally {
      await delivery.stop();
      await receiver.close();
    }
  }, 60_000);

  it('follows OTEL_TRACES_SAMPLER: a ratio for new traces, the caller for continued ones', async () => {
    await shutdownTracing();
    process.env.OTEL_TRACES_SAMPLER = 'parentbased_traceidratio';
    process.env.OTEL_TRACES_SAMPLER_ARG = '0';
    try {
      // A shut-down exporter takes no more spans.
      exporter = new (await import('@opentelemetry/sdk-trace-base')).InMemorySpanExporter();
      expect(await startTracing({ exporter })).toBe(true);
      const traceId = 'a'.repeat(32);
      await app.request('GET', '/healthz');
      await app.request('GET', '/healthz', { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
      await requestSpan(traceId);
      expect(spans().filter((s) => s.name === 'GET /healthz')).toHaveLength(1);
    } finally {
      await shutdownTracing();
      delete process.env.OTEL_TRACES_SAMPLER;
      delete process.env.OTEL_TRACES_SAMPLER_ARG;
    }
  });

  it('exports over OTLP/HTTP to the configured collector', async () => {
    await shutdownTracing();
    const received: { path: string; headers: IncomingMessage['headers']; body: string }[] = [];
    const collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${url}/v1/traces`;
    process.env.OTEL_EXPORTER_OTLP_HEADERS = 'x-collector-key=k3y';
    try {
      expect(await startTracing()).toBe(true);
      expect((await app.request('GET', '/api/v1/agents/active/', { token: await app.token() })).status).toBe(200);
      await flushTracing();

      const posts = received.filter((r) => r.path === '/v1/traces');
      expect(posts.length).toBeGreaterThan(0);
      expect(posts[0]!.headers['x-collector-key']).toBe('k3y');
      expect(posts[0]!.headers['content-type']).toContain('json');
      const exported = posts.flatMap((post) => (JSON.parse(post.body) as OtlpTraces).resourceSpans);
      const names = exported.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((span) => span.name)));
      expect(names).toContain('GET /api/v1/agents/active/');
      expect(exported[0]!.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'callflow' } });
    } finally {
      await shutdownTracing();
      delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
      delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
      await new Promise<void>((resolve) => collector.close(() => resolve()));
    }
  });
});

interface OtlpTraces {
  resourceSpans: {
    resource: { attributes: { key: string; value: unknown }[] };
    scopeSpans: { spans: { name: string }[] }[];
  }[];
}
