import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CHECKOUT_CENTS, MIN_CHECKOUT_CENTS, type CheckoutSettings } from '../src/services/billing/checkout.js';
import { startTestApp, type TestApp } from './support/app.js';
import { FakeStripe } from './support/fake-stripe.js';

// Buying credits end to end over real HTTP: createCreditCheckout through the official stripe package,
// pointed at a local fake speaking Stripe's protocol; then Stripe's signed checkout.session.completed for
// that session, sent to our webhook as Stripe sends it, and the balance and ledger it leaves.

const API_KEY = 'sk_test_0123456789abcdefghijklmnop';
const WEBHOOK_SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';

const CHECKOUT = /* GraphQL */ `
  mutation Buy($amountCents: Int!) {
    createCreditCheckout(amountCents: $amountCents) {
      id
      url
      amountCents
      currency
      expiresAt
    }
  }
`;
const BALANCE = /* GraphQL */ `
  query {
    creditBalance {
      balanceCents
      effectiveBalanceCents
    }
    creditTransactions(first: 10) {
      edges {
        node {
          kind
          amountCents
          description
        }
      }
    }
  }
`;

let stripe: FakeStripe;
let app: TestApp;
let checkout: CheckoutSettings;
beforeAll(async () => {
  stripe = await new FakeStripe(API_KEY).start();
  checkout = {
    apiKey: API_KEY,
    apiBaseUrl: stripe.url,
    successUrl: 'https://app.example.com/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}',
    cancelUrl: 'https://app.example.com/billing?checkout=cancelled',
  };
  app = await startTestApp({ stripeWebhookSecret: WEBHOOK_SECRET, settings: { checkout } });
});
afterAll(async () => {
  await app?.close();
  await stripe?.close();
});

function deliver(type: string, object: unknown, eventId = `evt_test_${randomUUID().replaceAll('-', '')}`) {
  const payload = JSON.stringify({ id: eventId, object: 'event', type, created: Math.floor(Date.now() / 1000), data: { object } });
  const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
  return app.request('POST', '/webhooks/stripe', {
    raw: payload,
    headers: { 'content-type': 'application/json', 'stripe-signature': header },
  });
}

describe('createCreditCheckout', () => {
  it('opens a Checkout Session naming the buyer, and its paid event credits the buyer once', async () => {
    const userId = randomUUID();
    const token = await app.token(userId);
    const before = Date.now();

    const created = await app.gql(CHECKOUT, { amountCents: 2500 }, token);
    expect(created.errors).toBeUndefined();
    const session = created.data.createCreditCheckout;
    expect(session).toEqual({
      id: expect.stringMatching(/^cs_test_/),
      url: `https://checkout.stripe.com/c/pay/${session.id}`,
      amountCents: 2500,
      currency: 'usd',
      expiresAt: expect.any(String),
    });
    expect(Date.parse(session.expiresAt)).toBeGreaterThan(before);

    const request = stripe.requests.at(-1)!;
    expect(request.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request.params).toMatchObject({
      mode: 'payment',
      'line_items[0][quantity]': '1',
      'line_items[0][price_data][currency]': 'usd',
      'line_items[0][price_data][unit_amount]': '2500',
      client_reference_id: userId,
      'metadata[user_id]': userId,
      success_url: checkout.successUrl,
      cancel_url: checkout.cancelUrl,
    });

    // Not paid yet: nothing on the balance.
    expect((await app.gql(BALANCE, {}, token)).data.creditBalance.balanceCents).toBe(0);

    const paid = stripe.completed(session.id);
    const eventId = `evt_test_${randomUUID().replaceAll('-', '')}`;
    const answers = [];
    for (let i = 0; i < 2; i += 1) answers.push(await deliver('checkout.session.completed', paid, eventId));
    // A second event about the same session (Stripe's async_payment_succeeded, say) credits nothing more.
    answers.push(await deliver('checkout.session.async_payment_succeeded', paid));
    expect(answers.map((a) => [a.status, a.json.result])).toEqual([
      [200, 'applied'],
      [200, 'duplicate'],
      [200, 'duplicate'],
    ]);

    const after = await app.gql(BALANCE, {}, token);
    expect(after.data.creditBalance).toEqual({ balanceCents: 2500, effectiveBalanceCents: 2500 });
    expect(after.data.creditTransactions.edges).toEqual([
      { node: { kind: 'top_up', amountCents: 2500, description: 'Credit top-up (Stripe Checkout)' } },
    ]);
    const row = await app.prisma.creditTransaction.findFirstOrThrow({ where: { userId } });
    expect(row.externalId).toBe(session.id);
  });

  it('credits what Stripe says was paid, to the user the session was made for', async () => {
    const buyer = randomUUID();
    const other = randomUUID();
    const created = await app.gql(CHECKOUT, { amountCents: 1000 }, await app.token(buyer));
    const paid = stripe.completed(created.data.createCreditCheckout.id);
    // A discount at the payment page: Stripe reports less paid than the session first asked.
    paid.amount_total = 900;
    await app.gql(BALANCE, {}, await app.token(other));

    expect((await deliver('checkout.session.completed', paid)).json.result).toBe('applied');
    expect((await app.gql(BALANCE, {}, await app.token(buyer))).data.creditBalance.balanceCents).toBe(900);
    expect((await app.gql(BALANCE, {}, await app.token(other))).data.creditBalance.balanceCents).toBe(0);
  });

  it.each([
    ['below the minimum', MIN_CHECKOUT_CENTS - 1, `Ensure this value is greater than or equal to ${MIN_CHECKOUT_CENTS}.`],
    ['zero', 0, `Ensure this value is greater than or equal to ${MIN_CHECKOUT_CENTS}.`],
    ['negative', -2500, `Ensure this value is greater than or equal to ${MIN_CHECKOUT_CENTS}.`],
    ['above the maximum', MAX_CHECKOUT_CENTS + 1, `Ensure this value is less than or equal to ${MAX_CHECKOUT_CENTS}.`],
  ])('refuses an amount %s with a field error, asking Stripe nothing', async (_label, amountCents, message) => {
    const asked = stripe.requests.length;
    const result = await app.gql(CHECKOUT, { amountCents }, await app.token());
    expect(result.data).toBeNull();
    expect(result.errors).toEqual([
      expect.objectContaining({
        path: ['createCreditCheckout'],
        extensions: { code: 'BAD_USER_INPUT', fieldErrors: { amountCents: [message] } },
      }),
    ]);
    expect(stripe.requests.length).toBe(asked);
  });

  it('takes the bounds themselves', async () => {
    for (const amountCents of [MIN_CHECKOUT_CENTS, MAX_CHECKOUT_CENTS]) {
      const result = await app.gql(CHECKOUT, { amountCents }, await app.token());
      expect(result.data.createCreditCheckout.amountCents).toBe(amountCents);
    }
  });

  it('needs a signed-in caller', async () => {
    const result = await app.gql(CHECKOUT, { amountCents: 2500 }, null);
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('answers UNAVAILABLE, not an internal error, when Stripe refuses or fails', async () => {
    const failures = [
      { status: 500, error: { type: 'api_error', message: 'An unknown error occurred' } },
      { status: 401, error: { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_test_****mnop' } },
    ];
    for (const failure of failures) {
      stripe.failWith = failure;
      try {
        const result = await app.gql(CHECKOUT, { amountCents: 2500 }, await app.token());
        expect(result.data).toBeNull();
        expect(result.errors).toEqual([
          expect.objectContaining({
            message: 'The payment provider could not open a checkout; try again later.',
            extensions: { code: 'UNAVAILABLE' },
          }),
        ]);
      } finally {
        stripe.failWith = undefined;
      }
    }
  });
});

describe('without a Stripe key', () => {
  let bare: TestApp;
  beforeAll(async () => {
    bare = await startTestApp();
  });
  afterAll(() => bare?.close());

  it('refuses clearly as UNAVAILABLE', async () => {
    const result = await bare.gql(CHECKOUT, { amountCents: 2500 }, await bare.token());
    expect(result.status).toBe(200);
    expect(result.data).toBeNull();
    expect(result.errors).toEqual([
      expect.objectContaining({
        message: 'Buying credits is not configured on this server (STRIPE_API_KEY).',
        extensions: { code: 'UNAVAILABLE' },
      }),
    ]);
  });
});
