import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { ledgerAndAccount } from './support/billing.js';

// POST /webhooks/stripe over real HTTP. Only Stripe is faked: events in Stripe's format, signed here with
// the official library's generateTestHeaderString, exactly as Stripe signs them.

const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ stripeWebhookSecret: SECRET });
});
afterAll(() => app.close());

let seq = 0;
const nextId = (prefix: string) => `${prefix}_test_${Date.now().toString(36)}${(seq += 1)}`;

function event(type: string, object: Record<string, unknown>, id = nextId('evt')) {
  return {
    id,
    object: 'event',
    api_version: '2025-10-29.clover',
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

function checkoutSession(userId: string | null, overrides: Record<string, unknown> = {}) {
  return {
    id: nextId('cs'),
    object: 'checkout.session',
    amount_subtotal: 2500,
    amount_total: 2500,
    client_reference_id: null,
    currency: 'usd',
    customer: 'cus_test_123',
    invoice: null,
    metadata: userId ? { user_id: userId } : {},
    mode: 'payment',
    payment_intent: nextId('pi'),
    payment_status: 'paid',
    status: 'complete',
    ...overrides,
  };
}

function paidInvoice(userId: string, overrides: Record<string, unknown> = {}) {
  const id = nextId('in');
  return {
    id,
    object: 'invoice',
    amount_due: 10_000,
    amount_paid: 10_000,
    amount_remaining: 0,
    currency: 'usd',
    customer: 'cus_test_123',
    hosted_invoice_url: `https://invoice.stripe.com/i/acct_test/${id}`,
    invoice_pdf: `https://pay.stripe.com/invoice/acct_test/${id}/pdf`,
    metadata: { user_id: userId },
    number: 'A1B2C3-0001',
    status: 'paid',
    ...overrides,
  };
}

function deliver(body: unknown, { secret = SECRET, tamper = false, signature }: { secret?: string; tamper?: boolean; signature?: string | null } = {}) {
  const payload = JSON.stringify(body, null, 2);
  const header = signature === undefined ? Stripe.webhooks.generateTestHeaderString({ payload, secret }) : signature;
  return app.request('POST', '/webhooks/stripe', {
    raw: tamper ? payload.replace('2500', '250000') : payload,
    headers: { 'content-type': 'application/json', ...(header === null ? {} : { 'stripe-signature': header }) },
  });
}

async function customer() {
  const id = randomUUID();
  await app.prisma.user.create({ data: { id } });
  return id;
}

async function snapshot(userId: string) {
  const [transactions, account, deliveries] = await Promise.all([
    app.prisma.creditTransaction.findMany({ where: { userId } }),
    app.prisma.creditAccount.findUnique({ where: { userId } }),
    app.prisma.webhookDelivery.count(),
  ]);
  return { transactions, account, deliveries };
}

describe('checkout.session.completed', () => {
  it('credits a paid session once as a top_up, even when delivered three times', async () => {
    const userId = await customer();
    const body = event('checkout.session.completed', checkoutSession(userId));

    const results = [];
    for (let i = 0; i < 3; i += 1) results.push(await deliver(body));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(results.map((r) => r.json)).toEqual([
      { received: true, result: 'applied' },
      { received: true, result: 'duplicate' },
      { received: true, result: 'duplicate' },
    ]);

    const { ledgerSum, account, rows } = await ledgerAndAccount(app, userId);
    expect(account).toMatchObject({ balanceCents: 2500n, includedRemainingCents: 0n });
    expect(ledgerSum).toBe(2500n);
    expect(rows).toEqual([
      expect.objectContaining({
        kind: 'top_up',
        amountCents: 2500n,
        balanceAfterCents: 2500n,
        description: 'Credit top-up (Stripe Checkout)',
        externalId: body.data.object.id,
        receiptUrl: null,
        invoiceUrl: null,
      }),
    ]);
  });

  it('credits once when the same event arrives three times at the same moment', async () => {
    const userId = await customer();
    const body = event('checkout.session.completed', checkoutSession(userId));
    const results = await Promise.all([deliver(body), deliver(body), deliver(body)]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(results.map((r) => r.json.result).sort()).toEqual(['applied', 'duplicate', 'duplicate']);
    expect((await ledgerAndAccount(app, userId)).account.balanceCents).toBe(2500n);
  });

  it('credits a delayed payment when it succeeds, and not again for another event about the same session', async () => {
    const userId = await customer();
    const session = checkoutSession(userId, { payment_status: 'unpaid' });
    expect((await deliver(event('checkout.session.completed', session))).json.result).toBe('ignored');
    const paid = { ...session, payment_status: 'paid' };
    expect((await deliver(event('checkout.session.async_payment_succeeded', paid))).json.result).toBe('applied');
    expect((await deliver(event('checkout.session.completed', paid))).json.result).toBe('duplicate');
    expect((await ledgerAndAccount(app, userId)).rows).toHaveLength(1);
  });

  it('leaves a session that created an invoice to invoice.paid', async () => {
    const userId = await customer();
    const res = await deliver(event('checkout.session.completed', checkoutSession(userId, { invoice: 'in_test_from_checkout' })));
    expect(res.json).toEqual({ received: true, result: 'ignored' });
    expect(await app.prisma.creditAccount.findUnique({ where: { userId } })).toBeNull();
  });
});

describe('invoice.paid', () => {
  it('credits the amount paid as a top_up carrying the invoice link, served as its receipt', async () => {
    const userId = await customer();
    const invoice = paidInvoice(userId);
    const res = await deliver(event('invoice.paid', invoice));
    expect(res.json).toEqual({ received: true, result: 'applied' });

    const [row] = (await ledgerAndAccount(app, userId)).rows;
    expect(row).toMatchObject({
      kind: 'top_up',
      amountCents: 10_000n,
      description: 'Credit top-up (Stripe invoice A1B2C3-0001)',
      externalId: invoice.id,
      invoiceUrl: invoice.hosted_invoice_url,
      receiptUrl: null,
    });
    const receipt = await app.request('GET', `/api/v1/billing/transactions/${row!.id}/receipt/`, { token: await app.token(userId) });
    expect(receipt.json).toEqual({ url: invoice.hosted_invoice_url, receipt_url: null, invoice_url: invoice.hosted_invoice_url });
  });

  it('ignores an invoice of nothing paid', async () => {
    const userId = await customer();
    const res = await deliver(event('invoice.paid', paidInvoice(userId, { amount_paid: 0 })));
    expect(res.json.result).toBe('ignored');
    expect((await snapshot(userId)).transactions).toEqual([]);
  });
});

describe('refusals', () => {
  it('answers 400 to a bad signature and changes nothing', async () => {
    const userId = await customer();
    const body = event('checkout.session.completed', checkoutSession(userId));
    const before = await snapshot(userId);

    for (const attempt of [
      deliver(body, { secret: 'whsec_someone_else' }),
      deliver(body, { tamper: true }),
      deliver(body, { signature: 't=1,v1=deadbeef' }),
      deliver(body, { signature: null }),
    ]) {
      const res = await attempt;
      expect(res.status).toBe(400);
      expect(Object.keys(res.json)).toEqual(['stripe-signature']);
    }
    expect(await snapshot(userId)).toEqual(before);
  });

  it('answers 400 to a stale signature (replayed after five minutes)', async () => {
    const body = event('checkout.session.completed', checkoutSession(await customer()));
    const payload = JSON.stringify(body);
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 301 });
    const res = await app.request('POST', '/webhooks/stripe', { raw: payload, headers: { 'content-type': 'application/json', 'stripe-signature': header } });
    expect(res.status).toBe(400);
    expect(res.json['stripe-signature'][0]).toMatch(/tolerance/);
  });

  const unusable: [string, (userId: string) => Record<string, unknown>, Record<string, string[]>][] = [
    ['no user id', () => checkoutSession(null), { 'data.object.metadata.user_id': ['Must be the UUID of the user to credit.'] }],
    ['an unknown user', () => checkoutSession(randomUUID()), { 'data.object.metadata.user_id': ['No user has this id.'] }],
    ['another currency', (userId) => checkoutSession(userId, { currency: 'eur' }), { 'data.object.currency': ['Credits are sold in usd only.'] }],
  ];
  for (const [label, session, fieldErrors] of unusable) {
    it(`answers 400 to a paid session with ${label}, recording nothing so that a redelivery can succeed`, async () => {
      const userId = await customer();
      const before = await snapshot(userId);
      const res = await deliver(event('checkout.session.completed', session(userId)));
      expect(res.status).toBe(400);
      expect(res.json).toEqual(fieldErrors);
      expect(await snapshot(userId)).toEqual(before);
    });
  }

  it('acknowledges and ignores event types it does not handle', async () => {
    const userId = await customer();
    const before = await snapshot(userId);
    for (const [type, object] of [
      ['customer.created', { id: 'cus_test_1', object: 'customer', metadata: { user_id: userId } }],
      ['payment_intent.succeeded', { id: 'pi_test_1', object: 'payment_intent', amount: 500, currency: 'usd', metadata: { user_id: userId } }],
      ['some.future.event', { id: 'x_1', object: 'unknown' }],
    ] as const) {
      const res = await deliver(event(type, object));
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ received: true, result: 'ignored' });
    }
    expect(await snapshot(userId)).toEqual(before);
  });

  it('needs no bearer token, and is not part of /api/v1', async () => {
    const res = await app.request('GET', '/api/v1/schema/');
    expect(Object.keys(res.json.paths).some((p) => p.includes('webhooks'))).toBe(false);
    expect((await app.request('GET', '/webhooks/stripe')).status).toBe(404);
  });

  it('answers 503 while STRIPE_WEBHOOK_SECRET is not configured, so that Stripe retries later', async () => {
    const unconfigured = await startTestApp();
    try {
      const payload = JSON.stringify(event('checkout.session.completed', checkoutSession(randomUUID())));
      const res = await unconfigured.request('POST', '/webhooks/stripe', {
        raw: payload,
        headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) },
      });
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ detail: 'Stripe webhooks are not configured (STRIPE_WEBHOOK_SECRET).' });
    } finally {
      await unconfigured.close();
    }
  });
});
