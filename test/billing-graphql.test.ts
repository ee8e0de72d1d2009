import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { holdForCall, insertCallAttempts, ledgerAndAccount, ledgerContext, settleCall } from './support/billing.js';

// Billing on GraphQL: balance, the ledger as a filtered Relay connection, receipts, and the admin-only
// grantCredits mutation. Money is the BigInt scalar: exact JSON numbers up to the ledger's ceiling.

let app: TestApp;
let adminToken: string;
beforeAll(async () => {
  app = await startTestApp();
  adminToken = await app.token(randomUUID(), 'admin');
});
afterAll(() => app.close());

const GRANT = /* GraphQL */ `
  mutation Grant($input: GrantCreditsInput!) {
    grantCredits(input: $input) {
      id
      kind
      amountCents
      balanceAfterCents
      includedAfterCents
      description
      receipt {
        url
      }
    }
  }
`;
const BALANCE = '{ creditBalance { balanceCents includedRemainingCents heldCents effectiveBalanceCents } }';
const TRANSACTIONS = /* GraphQL */ `
  query Transactions($first: Int, $after: String, $kinds: [CreditTransactionKind!], $from: DateTime, $to: DateTime) {
    creditTransactions(first: $first, after: $after, kinds: $kinds, from: $from, to: $to) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          kind
          amountCents
          createdAt
          receipt {
            url
            receiptUrl
            invoiceUrl
          }
        }
      }
    }
  }
`;

async function customer() {
  const id = randomUUID();
  const token = await app.token(id);
  await app.gql(BALANCE, {}, token); // the first request creates the user
  return { id, token };
}

async function grant(userId: string, kind: string, amountCents: number | string, description?: string) {
  const result = await app.gql(GRANT, { input: { userId, kind, amountCents, description } }, adminToken);
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data.grantCredits;
}

describe('creditBalance', () => {
  it('is all zeros for a user with no credits', async () => {
    const { token } = await customer();
    const result = await app.gql(BALANCE, {}, token);
    expect(result.data.creditBalance).toEqual({ balanceCents: 0, includedRemainingCents: 0, heldCents: 0, effectiveBalanceCents: 0 });
  });

  it('shows what calls in flight hold and what remains to spend', async () => {
    const { id, token } = await customer();
    await grant(id, 'top_up', 1000);
    await grant(id, 'included_grant', 400);
    const { campaignId, attemptIds } = await insertCallAttempts(app, id, 1);
    await holdForCall(ledgerContext(app), { userId: id, campaignId, callAttemptId: attemptIds[0]!, estimateCents: 600n });
    const result = await app.gql(BALANCE, {}, token);
    expect(result.data.creditBalance).toEqual({
      balanceCents: 1000,
      includedRemainingCents: 400,
      heldCents: 600,
      effectiveBalanceCents: 800,
    });
  });
});

describe('grantCredits', () => {
  it('lets an administrator top up, grant plan credits and adjust, each one ledger entry', async () => {
    const { id } = await customer();
    expect(await grant(id, 'top_up', 2000)).toMatchObject({
      kind: 'top_up',
      amountCents: 2000,
      balanceAfterCents: 2000,
      includedAfterCents: 0,
      description: 'Credit top-up',
      receipt: null,
    });
    expect(await grant(id, 'included_grant', '500', 'Pro plan, March')).toMatchObject({
      kind: 'included_grant',
      amountCents: 500,
      balanceAfterCents: 2000,
      includedAfterCents: 500,
      description: 'Pro plan, March',
    });
    expect(await grant(id, 'adjustment', -2000, 'Refunded by bank')).toMatchObject({
      kind: 'adjustment',
      amountCents: -2000,
      balanceAfterCents: 0,
      includedAfterCents: 500,
    });
    const { ledgerSum, account } = await ledgerAndAccount(app, id);
    expect(account).toMatchObject({ balanceCents: 0n, includedRemainingCents: 500n });
    expect(ledgerSum).toBe(500n);
  });

  it('keeps 64-bit amounts exact up to the ceiling of 2^53 - 1 cents, and refuses going beyond it', async () => {
    const { id, token } = await customer();
    const max = Number.MAX_SAFE_INTEGER;
    const response = await app.request('POST', '/graphql', {
      token: adminToken,
      body: { query: GRANT, variables: { input: { userId: id, kind: 'top_up', amountCents: max - 1 } } },
    });
    expect(response.text).toContain(`"amountCents":${max - 1}`);
    await grant(id, 'included_grant', 1);
    expect((await app.gql(BALANCE, {}, token)).data.creditBalance).toMatchObject({ effectiveBalanceCents: max });

    const beyond = await app.gql(GRANT, { input: { userId: id, kind: 'top_up', amountCents: 1 } }, adminToken);
    expect(beyond.errors![0]!.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      fieldErrors: { amountCents: [`This would take the credits above the largest balance, ${max} cents.`] },
    });
    const tooBig = await app.gql(GRANT, { input: { userId: id, kind: 'top_up', amountCents: '9223372036854775807' } }, adminToken);
    expect(tooBig.errors![0]!.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      fieldErrors: { amountCents: [`Ensure this value is less than or equal to ${max}.`] },
    });
  });

  it('is refused (FORBIDDEN) for a customer token and changes nothing', async () => {
    const { id, token } = await customer();
    const before = await app.prisma.creditTransaction.count();
    const result = await app.gql(GRANT, { input: { userId: id, kind: 'top_up', amountCents: 100 } }, token);
    expect(result.data).toBeNull();
    expect(result.errors![0]!.extensions).toEqual({ code: 'FORBIDDEN' });
    expect(await app.prisma.creditTransaction.count()).toBe(before);
    expect(await app.prisma.creditAccount.findUnique({ where: { userId: id } })).toBeNull();
  });

  const badGrants: [string, (userId: string) => Record<string, unknown>, Record<string, string[]>][] = [
    [
      'a zero top-up',
      (userId) => ({ userId, kind: 'top_up', amountCents: 0 }),
      { amountCents: ['Ensure this value is greater than or equal to 1.'] },
    ],
    [
      'a negative plan grant',
      (userId) => ({ userId, kind: 'included_grant', amountCents: -5 }),
      { amountCents: ['Ensure this value is greater than or equal to 1.'] },
    ],
    [
      'a zero adjustment',
      (userId) => ({ userId, kind: 'adjustment', amountCents: 0 }),
      { amountCents: ['An adjustment may not be zero.'] },
    ],
    [
      'an adjustment below the purchased balance',
      (userId) => ({ userId, kind: 'adjustment', amountCents: -301 }),
      { amountCents: ['This would take the purchased balance below zero; it is 300 cents.'] },
    ],
    ['an unknown user', () => ({ userId: randomUUID(), kind: 'top_up', amountCents: 10 }), { userId: ['No user has this id.'] }],
    [
      'a description over 500 characters',
      (userId) => ({ userId, kind: 'top_up', amountCents: 10, description: 'x'.repeat(501) }),
      {
        description: ['Ensure this field has no more than 500 characters.'],
      },
    ],
  ];

  for (const [label, input, fieldErrors] of badGrants) {
    it(`refuses ${label} with field errors and changes nothing`, async () => {
      const { id } = await customer();
      await grant(id, 'top_up', 300);
      const before = await ledgerAndAccount(app, id);
      const result = await app.gql(GRANT, { input: input(id) }, adminToken);
      expect(result.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT', fieldErrors });
      expect(await ledgerAndAccount(app, id)).toEqual(before);
    });
  }

  it('refuses a kind it cannot grant before any resolver runs', async () => {
    const { id } = await customer();
    const result = await app.gql(GRANT, { input: { userId: id, kind: 'call_charge', amountCents: 10 } }, adminToken);
    expect(result.errors![0]!.message).toMatch(/CreditGrantKind/);
  });

  it('refuses an amount that is not a whole number before any resolver runs', async () => {
    const { id } = await customer();
    for (const amountCents of [12.5, 'twelve', true]) {
      const result = await app.gql(GRANT, { input: { userId: id, kind: 'top_up', amountCents } }, adminToken);
      expect(result.errors![0]!.message).toMatch(/amountCents.*BigInt cannot represent value/);
    }
    expect(await app.prisma.creditTransaction.count({ where: { userId: id } })).toBe(0);
  });
});

describe('creditTransactions', () => {
  it('lists the caller’s ledger newest first as a connection, with receipts and calls linked', async () => {
    const { id, token } = await customer();
    await grant(id, 'top_up', 1000);
    const { campaignId, attemptIds } = await insertCallAttempts(app, id, 1);
    const billing = ledgerContext(app, { callRateCentsPerMinute: 60 });
    await holdForCall(billing, { userId: id, campaignId, callAttemptId: attemptIds[0]!, estimateCents: 100n });
    await settleCall(billing, { callAttemptId: attemptIds[0]!, durationSeconds: 30 });
    await app.prisma.creditTransaction.create({
      data: {
        userId: id,
        kind: 'top_up',
        amountCents: 0n,
        balanceAfterCents: 970n,
        includedAfterCents: 0n,
        invoiceUrl: 'https://invoice.stripe.com/i/abc',
        createdAt: new Date(Date.now() + 60_000),
      },
    });
    await grant((await customer()).id, 'top_up', 1);

    const result = await app.gql(
      `{ creditTransactions(first: 10) { totalCount edges { node {
          kind amountCents balanceAfterCents callAttemptId campaign { id name } receipt { url receiptUrl invoiceUrl }
      } } } }`,
      {},
      token,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data.creditTransactions.totalCount).toBe(3);
    expect(result.data.creditTransactions.edges.map((e: any) => e.node)).toEqual([
      {
        kind: 'top_up',
        amountCents: 0,
        balanceAfterCents: 970,
        callAttemptId: null,
        campaign: null,
        receipt: { url: 'https://invoice.stripe.com/i/abc', receiptUrl: null, invoiceUrl: 'https://invoice.stripe.com/i/abc' },
      },
      {
        kind: 'call_charge',
        amountCents: -30,
        balanceAfterCents: 970,
        callAttemptId: attemptIds[0],
        campaign: { id: campaignId, name: 'Billing run' },
        receipt: null,
      },
      { kind: 'top_up', amountCents: 1000, balanceAfterCents: 1000, callAttemptId: null, campaign: null, receipt: null },
    ]);
  });

  it('filters by kind and by date range (from inclusive, to exclusive), totalCount included', async () => {
    const { id, token } = await customer();
    const at = (day: number) => new Date(Date.UTC(2026, 2, day));
    await app.prisma.creditTransaction.createMany({
      data: [
        { kind: 'top_up' as const, createdAt: at(1) },
        { kind: 'call_charge' as const, createdAt: at(2) },
        { kind: 'call_charge' as const, createdAt: at(3) },
        { kind: 'adjustment' as const, createdAt: at(4) },
      ].map((row) => ({ ...row, userId: id, amountCents: 1n, balanceAfterCents: 0n, includedAfterCents: 0n })),
    });
    const kindsOf = async (variables: Record<string, unknown>) => {
      const result = await app.gql(TRANSACTIONS, { first: 10, ...variables }, token);
      expect(result.errors).toBeUndefined();
      const connection = result.data.creditTransactions;
      expect(connection.totalCount).toBe(connection.edges.length);
      return connection.edges.map((e: any) => e.node.kind);
    };
    expect(await kindsOf({})).toEqual(['adjustment', 'call_charge', 'call_charge', 'top_up']);
    expect(await kindsOf({ kinds: ['call_charge'] })).toEqual(['call_charge', 'call_charge']);
    expect(await kindsOf({ kinds: ['top_up', 'adjustment'] })).toEqual(['adjustment', 'top_up']);
    expect(await kindsOf({ from: at(2).toISOString(), to: at(4).toISOString() })).toEqual(['call_charge', 'call_charge']);
    expect(await kindsOf({ from: at(3).toISOString(), kinds: ['call_charge'] })).toEqual(['call_charge']);

    const backwards = await app.gql(TRANSACTIONS, { from: at(4).toISOString(), to: at(1).toISOString() }, token);
    expect(backwards.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT', fieldErrors: { to: ['Must not be earlier than from.'] } });
  });

  it('pages with Relay cursors, newest first', async () => {
    const { id, token } = await customer();
    for (const amount of [1, 2, 3]) await grant(id, 'top_up', amount);
    const first = (await app.gql(TRANSACTIONS, { first: 2 }, token)).data.creditTransactions;
    expect(first.edges.map((e: any) => e.node.amountCents)).toEqual([3, 2]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = (await app.gql(TRANSACTIONS, { first: 2, after: first.pageInfo.endCursor }, token)).data.creditTransactions;
    expect(second.edges.map((e: any) => e.node.amountCents)).toEqual([1]);
    expect(second.pageInfo.hasNextPage).toBe(false);
  });
});

describe('creditTransaction', () => {
  it('returns the caller’s own entry and NOT_FOUND for another user’s, keeping the rest of the response', async () => {
    const { id, token } = await customer();
    const mine = await grant(id, 'top_up', 10);
    const theirs = await grant((await customer()).id, 'top_up', 20);
    const result = await app.gql(
      'query($mine: UUID!, $theirs: UUID!) { mine: creditTransaction(id: $mine) { id amountCents } theirs: creditTransaction(id: $theirs) { id receipt { url } } }',
      { mine: mine.id, theirs: theirs.id },
      token,
    );
    expect(result.data).toEqual({ mine: { id: mine.id, amountCents: 10 }, theirs: null });
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0]).toMatchObject({ path: ['theirs'], extensions: { code: 'NOT_FOUND' } });
  });
});
