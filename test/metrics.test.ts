import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, dispatch } from './support/campaigns.js';
import { sample } from './support/prometheus.js';

// Prometheus metrics at /metrics: HTTP by route pattern, GraphQL by operation, SQL statements, and the
// gauges the dialer sets. Counters are per process and this file has its own, so values are exact.

describe('/metrics', () => {
  let app: TestApp;
  let token: string;
  const scrape = async () => (await app.request('GET', '/metrics')).text;

  beforeAll(async () => {
    app = await startTestApp();
    token = await app.token();
  });
  afterAll(() => app.close());

  it('is open without a token configured, in Prometheus text format', async () => {
    const res = await app.request('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(res.text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('counts and times HTTP requests by route pattern, never by raw path', async () => {
    const id = randomUUID();
    await app.request('GET', `/api/v1/contacts/contacts/${id}/`, { token });
    await app.request('GET', `/api/v1/contacts/contacts/${randomUUID()}/`, { token });
    await app.request('GET', '/no/such/page');
    await app.request('PURGE', '/healthz');
    const text = await scrape();
    const contact = { method: 'GET', route: '/api/v1/contacts/contacts/:id/', status: '404' };
    expect(sample(text, 'http_requests_total', contact)).toBe(2);
    expect(sample(text, 'http_request_duration_seconds_count', contact)).toBe(2);
    expect(sample(text, 'http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' })).toBe(1);
    expect(sample(text, 'http_requests_total', { method: 'OTHER', route: '(unmatched)', status: '404' })).toBe(1);
    expect(text).not.toContain(id);
    expect(text).not.toContain('/no/such/page');
  });

  it('counts and times GraphQL operations by type and name, and whether they failed', async () => {
    await app.gql('query Templates { agentTemplates { id } }', {}, token);
    await app.gql('query Templates { agentTemplates { id } }', {}, token);
    await app.gql(`{ agent(id: "${randomUUID()}") { id } }`, {}, token);
    const text = await scrape();
    const templates = { operation_type: 'query', operation_name: 'Templates' };
    expect(sample(text, 'graphql_operations_total', { ...templates, result: 'success' })).toBe(2);
    expect(sample(text, 'graphql_operation_duration_seconds_count', templates)).toBe(2);
    expect(sample(text, 'graphql_operations_total', { operation_type: 'query', operation_name: '(anonymous)', result: 'error' })).toBe(1);
    expect(sample(text, 'http_requests_total', { method: 'POST', route: '/graphql', status: '200' })).toBe(3);
  });

  it('counts SQL statements, transactions included', async () => {
    const scraped = sample(await scrape(), 'db_statements_total')!;
    const before = app.db.statementCount();
    await app.prisma.$transaction([app.prisma.user.count(), app.prisma.user.count()]);
    // BEGIN, two statements, COMMIT.
    expect(app.db.statementCount() - before).toBe(4);
    // Plus the one the next scrape reads the dialer gauges with.
    expect(sample(await scrape(), 'db_statements_total')! - scraped).toBe(5);
  });

  it('counts and times each store statement under its name', async () => {
    const labels = { statement: 'campaigns.list_with_relations' };
    const before = await scrape();
    await app.request('GET', '/api/v1/campaigns/', { token });
    await app.request('GET', '/api/v1/campaigns/', { token });
    const after = await scrape();
    expect((sample(after, 'db_named_statements_total', labels) ?? 0) - (sample(before, 'db_named_statements_total', labels) ?? 0)).toBe(2);
    const timed = (text: string) => sample(text, 'db_named_statement_duration_seconds_count', labels) ?? 0;
    expect(timed(after) - timed(before)).toBe(2);
  });

  it('reads the dialer gauges from the database at each scrape', async () => {
    const before = await scrape();
    expect(sample(before, 'dialer_calls_in_flight')).toBe(0);
    expect(sample(before, 'dialer_queue_depth')).toBe(0);
    expect(sample(before, 'dialer_credit_held_cents')).toBe(0);
    expect(sample(before, 'dialer_lag_seconds')).toBe(0);

    // A running campaign of four contacts (no dialer runs here), one of them on the phone with 45 cents held.
    const who = await customer(app, { contacts: 4 });
    const { id } = await createCampaign(app, who);
    expect((await dispatch(app, who.token, id)).status).toBe(202);
    const [first] = await app.prisma.campaignContact.findMany({ where: { campaignId: id }, take: 1 });
    await app.prisma.campaignContact.update({ where: { id: first!.id }, data: { state: 'dialing' } });
    await app.prisma.creditAccount.update({ where: { userId: who.id }, data: { heldCents: 45n } });
    // One waiting contact has been due for ten minutes: the dialer is that late.
    const waiting = await app.prisma.campaignContact.findFirstOrThrow({ where: { campaignId: id, state: 'pending' } });
    await app.prisma.campaignContact.update({ where: { id: waiting.id }, data: { nextAttemptAt: new Date(Date.now() - 600_000) } });

    const text = await scrape();
    expect(sample(text, 'dialer_calls_in_flight')).toBe(1);
    expect(sample(text, 'dialer_queue_depth')).toBe(3);
    expect(sample(text, 'dialer_credit_held_cents')).toBe(45);
    expect(sample(text, 'dialer_lag_seconds')).toBeGreaterThanOrEqual(600);
  });
});

describe('/metrics with METRICS_TOKEN', () => {
  const metricsToken = 'scrape-token-0123456789';
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ metricsToken });
  });
  afterAll(() => app.close());

  it('answers only a request bearing the token', async () => {
    const none = await app.request('GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect((await app.request('GET', '/metrics', { token: 'wrong-token-0123456789' })).status).toBe(401);
    const ok = await app.request('GET', '/metrics', { token: metricsToken });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('http_requests_total');
  });
});
