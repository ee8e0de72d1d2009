import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { startTestApp, type TestApp } from './support/app.js';
import { ledgerAndAccount } from './support/billing.js';

// POST /webhooks/stripe over real HTTP. Only Stripe is faked: events in Stripe's format, signed here with
// the official library's generateTestHeaderString, exactly as Stripe signs them.

const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';

const logLines: Record<string, any>[] = [];
let app: TestApp;
beforeAll(async () => {
  const log = createLogger('info', { write: (chunk: string) => void logLines.push(JSON.parse(chunk)) });
  app = await startTestApp({ stripeWebhookSecret: SECRET, log });
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

function deliver(
  body: unknown,
  {
    secret = SECRET,
    tamper = false,
    signature,
    timestamp,
  }: { secret?: string; tamper?: boolean; signature?: string | null; timestamp?: number } = {},
) {
  const payload = JSON.stringify(body, null, 2);
  const header = signature === undefined ? Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }) : signature;
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

  it('credits once when two events about the same payment arrive at the same moment', async () => {
    const userId = await customer();
    const session = checkoutSession(userId);
    // Two events, so both pass the delivery's record: the payment's id is what stops the second.
    const results = await Promise.all([
      deliver(event('checkout.session.completed', session)),
      deliver(event('checkout.session.async_payment_succeeded', session)),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(results.map((r) => r.json.result).sort()).toEqual(['applied', 'duplicate']);
    const { account, rows, ledgerSum } = await ledgerAndAccount(app, userId);
    expect(account.balanceCents).toBe(2500n);
    expect(ledgerSum).toBe(2500n);
    expect(rows.map((r) => r.externalId)).toEqual([session.id]);
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

describe('payments that can never be credited', () => {
  const warningsAbout = (eventId: string) => logLines.filter((line) => line.level === 40 && line.eventId === eventId);

  // What Stripe would never send for a top-up, yet a correctly signed event could carry.
  const amounts: [string, unknown][] = [
    ['a negative amount', -500],
    ['a fractional amount', 7.5],
    ['an amount written as a string', '700'],
    ['an amount of nothing', 0],
    ['no amount', null],
    ['an amount beyond exact integers', 2 ** 53],
  ];
  for (const [label, amount] of amounts) {
    it(`acknowledges a paid session with ${label}, writes nothing and logs a warning`, async () => {
      const userId = await customer();
      await deliver(event('checkout.session.completed', checkoutSession(userId, { amount_total: 700 })));
      const before = await snapshot(userId);
      expect(before.account?.balanceCents).toBe(700n);

      const body = event('checkout.session.completed', checkoutSession(userId, { amount_total: amount }));
      const res = await deliver(body);
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ received: true, result: 'ignored' });
      expect(await snapshot(userId)).toEqual(before);
      expect(warningsAbout(body.id)).toEqual([
        expect.objectContaining({ msg: 'stripe payment ignored: the amount is not a positive whole number of cents', amount }),
      ]);
    });
  }

  it('acknowledges a paid invoice with a negative amount and writes nothing', async () => {
    const userId = await customer();
    const before = await snapshot(userId);
    const body = event('invoice.paid', paidInvoice(userId, { amount_paid: -500 }));
    expect((await deliver(body)).json).toEqual({ received: true, result: 'ignored' });
    expect(await snapshot(userId)).toEqual(before);
    expect(warningsAbout(body.id)).toHaveLength(1);
  });

  for (const [label, currency] of [
    ['another currency', 'eur'],
    ['the currency in capitals', 'USD'],
    ['no currency', null],
  ] as const) {
    it(`acknowledges a payment in ${label}, writes nothing and logs a warning`, async () => {
      const userId = await customer();
      const before = await snapshot(userId);
      for (const body of [
        event('checkout.session.completed', checkoutSession(userId, { currency })),
        event('invoice.paid', paidInvoice(userId, { currency })),
      ]) {
        expect((await deliver(body)).json).toEqual({ received: true, result: 'ignored' });
        expect(warningsAbout(body.id)).toEqual([
          expect.objectContaining({ msg: 'stripe payment ignored: the currency is not usd', currency }),
        ]);
      }
      expect(await snapshot(userId)).toEqual(before);
    });
  }

  it('ignores an unusable amount before looking for the user, since no redelivery could ever credit it', async () => {
    const body = event('checkout.session.completed', checkoutSession(null, { amount_total: -1 }));
    expect((await deliver(body)).json).toEqual({ received: true, result: 'ignored' });
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
    const res = await app.request('POST', '/webhooks/stripe', {
      raw: payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': header },
    });
    expect(res.status).toBe(400);
    expect(res.json['stripe-signature'][0]).toMatch(/tolerance/);
  });

  it('answers 400 to a signature dated in the future beyond the tolerance, and accepts one within it', async () => {
    const userId = await customer();
    const body = event('checkout.session.completed', checkoutSession(userId));
    // Each timestamp is read right before its request: one read for both let a second tick by in between.
    const ahead = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;
    for (const seconds of [3600, 301]) {
      const res = await deliver(body, { timestamp: ahead(seconds) });
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ 'stripe-signature': ['Timestamp outside the tolerance zone'] });
    }
    expect((await snapshot(userId)).transactions).toEqual([]);
    expect((await deliver(body, { timestamp: ahead(240) })).json.result).toBe('applied');
  });

  it('answers 400 to a correctly signed timestamp that is not a number', async () => {
    const userId = await customer();
    const payload = JSON.stringify(event('checkout.session.completed', checkoutSession(userId)));
    // Stripe's library signs and checks `${parseInt(t)}.${payload}`: NaN here, which it takes for recent.
    const signature = Stripe.createNodeCryptoProvider().computeHMACSignature(`NaN.${payload}`, SECRET);
    const res = await app.request('POST', '/webhooks/stripe', {
      raw: payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': `t=later,v1=${signature}` },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ 'stripe-signature': ['Timestamp outside the tolerance zone'] });
    expect((await snapshot(userId)).transactions).toEqual([]);
  });

  it('answers 400 with field errors to a correctly signed body that is not a Stripe event, never 500', async () => {
    const userId = await customer();
    const before = await snapshot(userId);
    const session = checkoutSession(userId);
    const cases: [unknown, Record<string, string[]>][] = [
      [null, { non_field_errors: ['This field may not be null.'] }],
      [[1, 2], { non_field_errors: ['Expected a dictionary of items but got type "list".'] }],
      [{ ...event('checkout.session.completed', session), data: undefined }, { data: ['This field is required.'] }],
      [{ ...event('checkout.session.completed', session), id: 42 }, { id: ['Not a valid string.'] }],
      [event('checkout.session.completed', { ...session, id: 7 }), { 'data.object.id': ['Not a valid string.'] }],
      [event('checkout.session.completed', { ...session, id: 'cs_\u0000' }), { 'data.object.id': ['Must be a Stripe id.'] }],
      [
        event('checkout.session.completed', { ...session, metadata: 'user' }),
        { 'data.object.metadata': ['Expected a dictionary of items but got type "str".'] },
      ],
      [
        event('invoice.paid', paidInvoice(userId, { hosted_invoice_url: 'javascript:alert(1)' })),
        { 'data.object.hosted_invoice_url': ['Must be an https link.'] },
      ],
      [event('invoice.paid', paidInvoice(userId, { number: { n: 1 } })), { 'data.object.number': ['Not a valid string.'] }],
    ];
    for (const [body, fieldErrors] of cases) {
      const res = await deliver(body);
      expect(res.status, res.text).toBe(400);
      expect(res.json).toEqual(fieldErrors);
    }
    const notJson = '{"id": "evt_1",';
    const res = await app.request('POST', '/webhooks/stripe', {
      raw: notJson,
      headers: {
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: notJson, secret: SECRET }),
      },
    });
    expect(res.status).toBe(400);
    expect(res.json.non_field_errors[0]).toMatch(/^JSON parse error - /);
    expect(await snapshot(userId)).toEqual(before);
  });

  const unusable: [string, (userId: string) => Record<string, unknown>, Record<string, string[]>][] = [
    ['no user id', () => checkoutSession(null), { 'data.object.metadata.user_id': ['Must be the UUID of the user to credit.'] }],
    ['an unknown user', () => checkoutSession(randomUUID()), { 'data.object.metadata.user_id': ['No user has this id.'] }],
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
      [
        'payment_intent.succeeded',
        { id: 'pi_test_1', object: 'payment_intent', amount: 500, currency: 'usd', metadata: { user_id: userId } },
      ],
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
        headers: {
          'content-type': 'application/json',
          'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }),
        },
      });
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ detail: 'Stripe webhooks are not configured (STRIPE_WEBHOOK_SECRET).' });
    } finally {
      await unconfigured.close();
    }
  });
});
