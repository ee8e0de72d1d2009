import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantCredits } from '../src/services/billing/grants.js';
import { startTestApp, type TestApp } from './support/app.js';
import { holdForCall, insertCallAttempts, ledgerContext } from './support/billing.js';
import { openApiChecker, type OpenApiChecker } from './support/openapi.js';

// The three v1 billing endpoints (contract 2.8, 2.9, endpoints 18-20), field by field and against the
// OpenAPI document the server publishes.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const TRANSACTION_FIELDS = [
  'id',
  'kind',
  'amount_cents',
  'balance_after_cents',
  'included_after_cents',
  'description',
  'campaign_id',
  'call_attempt_id',
  'receipt_url',
  'invoice_url',
  'created_at',
];

let app: TestApp;
let openapi: any;
let checker: OpenApiChecker;

beforeAll(async () => {
  app = await startTestApp();
  checker = await openApiChecker(app);
  openapi = checker.document;
});
afterAll(() => app.close());

const expectMatchesOpenApi = (path: string, status: number, body: unknown) => checker.expectMatches(path, 'get', status, body);

const admin = () => ({ ...ledgerContext(app), user: { id: randomUUID(), isAdmin: true } });

async function customer() {
  const id = randomUUID();
  const token = await app.token(id);
  await app.request('GET', '/api/v1/billing/credits/', { token }); // the first request creates the user
  return { id, token };
}

/** Ledger rows written straight to the table, for listing and receipt cases the ledger itself never mixes. */
async function insertTransactions(userId: string, rows: { receiptUrl?: string; invoiceUrl?: string; createdAt?: Date }[]) {
  const base = Date.parse('2026-01-01T00:00:00Z');
  await app.prisma.creditTransaction.createMany({
    data: rows.map((row, i) => ({
      userId,
      kind: 'top_up' as const,
      amountCents: BigInt(100 * (i + 1)),
      balanceAfterCents: 0n,
      includedAfterCents: 0n,
      description: `Row ${i}`,
      createdAt: new Date(base + i * 1000),
      ...row,
    })),
  });
  return app.prisma.creditTransaction.findMany({ where: { userId }, orderBy: { createdAt: 'asc' } });
}

describe('GET /api/v1/billing/credits/', () => {
  it('answers balances of 0 for a user with no credits, without creating an account', async () => {
    const { id, token } = await customer();
    const res = await app.request('GET', '/api/v1/billing/credits/', { token });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ balance_cents: 0, effective_balance_cents: 0, included_remaining_cents: 0 });
    expect(await app.prisma.creditAccount.findUnique({ where: { userId: id } })).toBeNull();
  });

  it('returns the 2.8 object: purchased, included, and effective = both minus what calls hold', async () => {
    const { id, token } = await customer();
    await grantCredits(admin(), { user_id: id, kind: 'top_up', amount_cents: 2500 });
    await grantCredits(admin(), { user_id: id, kind: 'included_grant', amount_cents: 700 });
    const { campaignId, attemptIds } = await insertCallAttempts(app, id, 1);
    await holdForCall(ledgerContext(app), { userId: id, campaignId, callAttemptId: attemptIds[0]!, estimateCents: 200n });

    const res = await app.request('GET', '/api/v1/billing/credits/', { token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(['balance_cents', 'effective_balance_cents', 'included_remaining_cents']);
    expect(res.json).toEqual({ balance_cents: 2500, effective_balance_cents: 3000, included_remaining_cents: 700 });
    expectMatchesOpenApi('/api/v1/billing/credits/', 200, res.json);
  });

  it('needs a bearer token', async () => {
    const res = await app.request('GET', '/api/v1/billing/credits/');
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ detail: 'Authentication credentials were not provided.' });
  });
});

describe('GET /api/v1/billing/transactions/', () => {
  it('lists the caller’s transactions newest first, field by field', async () => {
    const { id, token } = await customer();
    await grantCredits(admin(), { user_id: id, kind: 'included_grant', amount_cents: 300, description: 'Starter plan' });
    await grantCredits(admin(), { user_id: id, kind: 'top_up', amount_cents: 1000 });
    await grantCredits(admin(), { user_id: id, kind: 'adjustment', amount_cents: -250, description: 'Duplicate top-up' });
    const other = await customer();
    await grantCredits(admin(), { user_id: other.id, kind: 'top_up', amount_cents: 5 });

    const res = await app.request('GET', '/api/v1/billing/transactions/', { token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(['has_more', 'transactions']);
    expect(res.json.has_more).toBe(false);
    const [adjustment, topUp, included] = res.json.transactions;
    expect(res.json.transactions).toHaveLength(3);
    for (const t of res.json.transactions) {
      expect(Object.keys(t).sort()).toEqual([...TRANSACTION_FIELDS].sort());
      expect(t.id).toMatch(UUID);
      expect(t.created_at).toMatch(ISO);
    }
    expect(included).toMatchObject({
      kind: 'included_grant',
      amount_cents: 300,
      balance_after_cents: 0,
      included_after_cents: 300,
      description: 'Starter plan',
      campaign_id: null,
      call_attempt_id: null,
      receipt_url: null,
      invoice_url: null,
    });
    expect(topUp).toMatchObject({
      kind: 'top_up',
      amount_cents: 1000,
      balance_after_cents: 1000,
      included_after_cents: 300,
      description: 'Credit top-up',
    });
    expect(adjustment).toMatchObject({
      kind: 'adjustment',
      amount_cents: -250,
      balance_after_cents: 750,
      included_after_cents: 300,
      description: 'Duplicate top-up',
    });
    expectMatchesOpenApi('/api/v1/billing/transactions/', 200, res.json);
  });

  it('pages with limit and offset: has_more exact at the boundary, empty past the end', async () => {
    const { id, token } = await customer();
    const rows = await insertTransactions(
      id,
      Array.from({ length: 5 }, () => ({})),
    );
    const newestFirst = rows.map((r) => r.id).reverse();
    const page = async (query: string) => (await app.request('GET', `/api/v1/billing/transactions/?${query}`, { token })).json;

    expect(await page('limit=5')).toEqual({ transactions: expect.any(Array), has_more: false });
    expect((await page('limit=5')).transactions.map((t: any) => t.id)).toEqual(newestFirst);
    expect((await page('limit=4')).has_more).toBe(true);
    const last = await page('limit=2&offset=3');
    expect(last.transactions.map((t: any) => t.id)).toEqual(newestFirst.slice(3));
    expect(last.has_more).toBe(false);
    expect((await page('limit=2&offset=2')).has_more).toBe(true);
    expect(await page('offset=5')).toEqual({ transactions: [], has_more: false });
    expect(await page('offset=500')).toEqual({ transactions: [], has_more: false });
  });

  it('counts a limit above 500 as 500', async () => {
    const { id, token } = await customer();
    await insertTransactions(
      id,
      Array.from({ length: 501 }, () => ({})),
    );
    const res = await app.request('GET', '/api/v1/billing/transactions/?limit=100000', { token });
    expect(res.status).toBe(200);
    expect(res.json.transactions).toHaveLength(500);
    expect(res.json.has_more).toBe(true);
    const rest = await app.request('GET', '/api/v1/billing/transactions/?limit=501&offset=500', { token });
    expect(rest.json.transactions).toHaveLength(1);
    expect(rest.json.has_more).toBe(false);
  });

  it('refuses a bad limit or offset with field errors', async () => {
    const { token } = await customer();
    const res = await app.request('GET', '/api/v1/billing/transactions/?limit=ten&offset=-1', { token });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      limit: ['A valid integer is required.'],
      offset: ['Ensure this value is greater than or equal to 0.'],
    });
    expect((await app.request('GET', '/api/v1/billing/transactions/?limit=0', { token })).json).toEqual({
      limit: ['Ensure this value is greater than or equal to 1.'],
    });
  });
});

describe('GET /api/v1/billing/transactions/{id}/receipt/', () => {
  it('gives url = the receipt when there is one, else the invoice', async () => {
    const { id, token } = await customer();
    const [both, invoiceOnly, receiptOnly] = await insertTransactions(id, [
      { receiptUrl: 'https://pay.stripe.com/receipts/r1', invoiceUrl: 'https://invoice.stripe.com/i/i1' },
      { invoiceUrl: 'https://invoice.stripe.com/i/i2' },
      { receiptUrl: 'https://pay.stripe.com/receipts/r3' },
    ]);
    const receipt = async (txId: string) => app.request('GET', `/api/v1/billing/transactions/${txId}/receipt/`, { token });

    const res = await receipt(both!.id);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      url: 'https://pay.stripe.com/receipts/r1',
      receipt_url: 'https://pay.stripe.com/receipts/r1',
      invoice_url: 'https://invoice.stripe.com/i/i1',
    });
    expectMatchesOpenApi('/api/v1/billing/transactions/{id}/receipt/', 200, res.json);
    expect((await receipt(invoiceOnly!.id)).json).toEqual({
      url: 'https://invoice.stripe.com/i/i2',
      receipt_url: null,
      invoice_url: 'https://invoice.stripe.com/i/i2',
    });
    expect((await receipt(receiptOnly!.id)).json).toEqual({
      url: 'https://pay.stripe.com/receipts/r3',
      receipt_url: 'https://pay.stripe.com/receipts/r3',
      invoice_url: null,
    });
  });

  it('is 404 for a transaction with neither link, another user’s transaction, an unknown id and a malformed one', async () => {
    const { id, token } = await customer();
    const [plain] = await insertTransactions(id, [{}]);
    const stranger = await customer();
    const [theirs] = await insertTransactions(stranger.id, [{ receiptUrl: 'https://pay.stripe.com/receipts/theirs' }]);

    for (const txId of [plain!.id, theirs!.id, randomUUID(), 'not-a-uuid']) {
      const res = await app.request('GET', `/api/v1/billing/transactions/${txId}/receipt/`, { token });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: 'Not found.' });
    }
  });
});

describe('the OpenAPI document', () => {
  it('describes the three billing operations and the transaction fields', () => {
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining(['/api/v1/billing/credits/', '/api/v1/billing/transactions/', '/api/v1/billing/transactions/{id}/receipt/']),
    );
    expect(openapi.components.schemas.CreditTransaction.required).toEqual(expect.arrayContaining(TRANSACTION_FIELDS));
    expect(openapi.components.schemas.CreditBalance.properties.balance_cents.type).toBe('integer');
    const params = openapi.paths['/api/v1/billing/transactions/'].get.parameters.map((p: any) => p.name);
    expect(params).toEqual(['limit', 'offset']);
  });
});
