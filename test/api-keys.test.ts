import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ACTIVE_KEYS } from '../src/services/api-keys/api-keys.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, type Customer } from './support/campaigns.js';
import { ALWAYS_OPEN, CAMPAIGN_UPDATED } from './support/live.js';
import { subscribe } from './support/sse.js';

// API keys: created and revoked on GraphQL with a token, accepted as bearer credentials on both surfaces
// and subscriptions, with the tenancy of their user; a read key changes nothing; a revoked key is refused
// at once, by every instance.

const CREATE = /* GraphQL */ `
  mutation ($input: CreateApiKeyInput!) {
    createApiKey(input: $input) {
      secret
      apiKey {
        id
        name
        prefix
        scope
        expiresAt
        lastUsedAt
        revokedAt
      }
    }
  }
`;
const LIST = '{ apiKeys { id name prefix scope lastUsedAt revokedAt } }';
const REVOKE = 'mutation ($id: UUID!) { revokeApiKey(id: $id) { id revokedAt } }';
const ADD_DNC = 'mutation { addDoNotCall(input: { phoneNumber: "+1 415 555 0188" }) { phoneNumber } }';

let app: TestApp;
/** A second instance on the same database, as behind a load balancer. */
let other: TestApp;
let alice: Customer;
let bob: Customer;
beforeAll(async () => {
  app = await startTestApp();
  other = await startTestApp({ database: { ...app.db, close: async () => {} } });
  [alice, bob] = await Promise.all([customer(app, { contacts: 1 }), customer(app, { contacts: 1 })]);
});
afterAll(async () => {
  await other.close();
  await app.close();
});

async function createKey(token: string, input: Record<string, unknown> = {}) {
  const result = await app.gql(CREATE, { input: { name: 'CRM sync', ...input } }, token);
  expect(result.errors).toBeUndefined();
  return result.data.createApiKey as { secret: string; apiKey: { id: string; name: string; prefix: string; scope: string } };
}

describe('creating a key', () => {
  it('shows the secret once and keeps only its hash', async () => {
    const { secret, apiKey } = await createKey(alice.token, { scope: 'read' });
    expect(secret).toMatch(/^cfk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(secret.startsWith(`${apiKey.prefix}_`)).toBe(true);
    expect(apiKey).toMatchObject({ name: 'CRM sync', scope: 'read', expiresAt: null, lastUsedAt: null, revokedAt: null });

    const listed = await app.gql(LIST, {}, alice.token);
    expect(JSON.stringify(listed.data)).not.toContain(secret.slice(apiKey.prefix.length));
    expect(listed.data.apiKeys.map((k: { id: string }) => k.id)).toContain(apiKey.id);

    const row = await app.prisma.apiKey.findUniqueOrThrow({ where: { id: apiKey.id } });
    const secretPart = secret.slice(apiKey.prefix.length + 1);
    expect(Buffer.from(row.secretHash)).toEqual(createHash('sha256').update(secretPart).digest());
    expect(JSON.stringify(row)).not.toContain(secretPart);
  });

  it('refuses bad input with field errors and creates nothing', async () => {
    const before = await app.prisma.apiKey.count({ where: { userId: alice.id } });
    for (const input of [{ name: '' }, { name: 'x'.repeat(101) }, { name: 'Old', expiresAt: '2020-01-01T00:00:00Z' }]) {
      const result = await app.gql(CREATE, { input }, alice.token);
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
      expect(Object.keys(result.errors![0]!.extensions!.fieldErrors as object)).toEqual([input.expiresAt ? 'expiresAt' : 'name']);
    }
    expect(await app.prisma.apiKey.count({ where: { userId: alice.id } })).toBe(before);
  });

  it(`stops at ${MAX_ACTIVE_KEYS} active keys, however many requests arrive at once`, async () => {
    // Eight creates at once, four places left, on each of three fresh customers: only the database can keep
    // them apart (each request has its own connection on PostgreSQL), as it must between API processes.
    for (let round = 0; round < 3; round++) {
      const holder = { id: randomUUID(), token: '' };
      holder.token = await app.token(holder.id);
      await app.gql(LIST, {}, holder.token); // the user's row, made on first sight
      await app.prisma.apiKey.createMany({
        data: Array.from({ length: MAX_ACTIVE_KEYS - 4 }, (_, i) => ({
          userId: holder.id,
          name: `Existing ${i}`,
          publicId: `${round}${i}`.padEnd(16, 'f'),
          secretHash: new Uint8Array(32),
          scope: 'read' as const,
        })),
      });
      const results = await Promise.all(Array.from({ length: 8 }, () => app.gql(CREATE, { input: { name: 'Raced' } }, holder.token)));
      expect(results.filter((r) => !r.errors)).toHaveLength(4);
      expect(results.filter((r) => r.errors).map((r) => r.errors![0]!.extensions)).toEqual(
        Array.from({ length: 4 }, () => expect.objectContaining({ code: 'CONFLICT', reason: 'api_key_limit' })),
      );
      expect(await app.prisma.apiKey.count({ where: { userId: holder.id } })).toBe(MAX_ACTIVE_KEYS);
    }
  }, 120_000);

  it('cannot be done with a key, not even a full one', async () => {
    const { secret, apiKey } = await createKey(alice.token);
    const result = await app.gql(CREATE, { input: { name: 'Minted by a key' } }, secret);
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await app.gql(REVOKE, { id: apiKey.id }, secret)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await app.prisma.apiKey.count({ where: { name: 'Minted by a key' } })).toBe(0);
  });
});

describe('a full key', () => {
  it("acts as its user on both surfaces, sees only that user's data, and records its use", async () => {
    const { secret, apiKey } = await createKey(alice.token);
    const campaign = await createCampaign(app, alice, ALWAYS_OPEN);
    const theirs = await createCampaign(app, bob, ALWAYS_OPEN);

    const listed = await app.request('GET', '/api/v1/campaigns/', { token: secret });
    expect(listed.status).toBe(200);
    expect(listed.json.map((c: { id: string }) => c.id)).toEqual([campaign.id]);
    expect((await app.request('GET', `/api/v1/campaigns/${theirs.id}/`, { token: secret })).status).toBe(404);
    const read = await app.gql('query ($id: UUID!) { campaign(id: $id) { id } }', { id: campaign.id }, secret);
    expect(read.data.campaign.id).toBe(campaign.id);

    const added = await app.gql(ADD_DNC, {}, secret);
    expect(added.data.addDoNotCall.phoneNumber).toBe('+14155550188');
    expect(await app.prisma.doNotCallEntry.count({ where: { userId: alice.id } })).toBe(1);
    expect((await app.prisma.apiKey.findUniqueOrThrow({ where: { id: apiKey.id } })).lastUsedAt).not.toBeNull();
  });

  it('never carries admin rights', async () => {
    const admin = await app.token(alice.id, 'admin');
    const { secret } = await createKey(admin);
    const grant = (token: string) =>
      app.gql(
        'mutation ($input: GrantCreditsInput!) { grantCredits(input: $input) { id } }',
        { input: { userId: bob.id, kind: 'top_up', amountCents: 100 } },
        token,
      );
    expect((await grant(admin)).errors).toBeUndefined();
    expect((await grant(secret)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

describe('a read key', () => {
  it('reads, subscribes, and is refused every change on both surfaces with a 403, changing nothing', async () => {
    const { secret } = await createKey(bob.token, { scope: 'read' });
    expect((await app.request('GET', '/api/v1/agents/active/', { token: secret })).status).toBe(200);
    expect((await app.gql('{ creditBalance { balanceCents } }', {}, secret)).data.creditBalance).toBeDefined();

    const groupsBefore = await app.prisma.contactGroup.count({ where: { userId: bob.id } });
    const refused = await app.request('POST', '/api/v1/contacts/import/', {
      token: secret,
      body: { group_name: 'Not allowed', csv_data: [{ Phone: '+14155550199' }] },
    });
    expect(refused.status).toBe(403);
    expect(refused.json.detail).toMatch(/may only read/);
    expect(await app.prisma.contactGroup.count({ where: { userId: bob.id } })).toBe(groupsBefore);

    const mutation = await app.gql(ADD_DNC, {}, secret);
    expect(mutation.data).toBeUndefined();
    expect(mutation.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await app.prisma.doNotCallEntry.count({ where: { userId: bob.id } })).toBe(0);

    const campaign = await createCampaign(app, bob, ALWAYS_OPEN);
    const live = await subscribe(app.url, CAMPAIGN_UPDATED, { id: campaign.id }, secret);
    try {
      await live.until((results) => results.length >= 1);
      expect(live.results[0]!.data?.campaignUpdated.id).toBe(campaign.id);
    } finally {
      live.close();
    }
  });
});

describe('a key that no longer holds', () => {
  it('is refused by every instance from the request after its revocation', async () => {
    const { secret, apiKey } = await createKey(alice.token);
    expect((await other.request('GET', '/api/v1/agents/active/', { token: secret })).status).toBe(200);
    const revoked = await app.gql(REVOKE, { id: apiKey.id }, alice.token);
    expect(revoked.data.revokeApiKey.revokedAt).not.toBeNull();
    for (const instance of [app, other]) {
      expect((await instance.request('GET', '/api/v1/agents/active/', { token: secret })).status).toBe(401);
      expect((await instance.gql('{ creditBalance { balanceCents } }', {}, secret)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    const live = await subscribe(app.url, CAMPAIGN_UPDATED, { id: apiKey.id }, secret);
    await live.ended;
    expect(live.status).toBe(401);
    // Revoking again keeps the first time.
    expect((await app.gql(REVOKE, { id: apiKey.id }, alice.token)).data.revokeApiKey.revokedAt).toBe(revoked.data.revokeApiKey.revokedAt);
  });

  it('ends the subscriptions it opened, on every instance, with a last UNAUTHENTICATED event', async () => {
    const [revoked, expired] = await Promise.all([createKey(alice.token, { scope: 'read' }), createKey(alice.token)]);
    const campaign = await createCampaign(app, alice, ALWAYS_OPEN);
    // Opened on the other instance: nothing tells it of the revocation but the key's own row.
    const byRevoked = await subscribe(other.url, CAMPAIGN_UPDATED, { id: campaign.id }, revoked.secret);
    const byExpired = await subscribe(app.url, CAMPAIGN_UPDATED, { id: campaign.id }, expired.secret);
    const byToken = await subscribe(app.url, CAMPAIGN_UPDATED, { id: campaign.id }, alice.token);
    try {
      for (const live of [byRevoked, byExpired, byToken]) await live.until((results) => results.length >= 1);
      expect((await app.gql(REVOKE, { id: revoked.apiKey.id }, alice.token)).errors).toBeUndefined();
      await app.prisma.apiKey.update({ where: { id: expired.apiKey.id }, data: { expiresAt: new Date(Date.now() - 1_000) } });

      for (const live of [byRevoked, byExpired]) {
        await live.until((results) => results.some((result) => result.errors));
        await live.ended;
        expect(live.completed).toBe(true);
        expect(live.results.at(-1)).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
        expect(live.results.at(-1)!.data).toBeUndefined();
      }
      // A token's stream goes on, and still hears of changes.
      expect(byToken.completed).toBe(false);
      const edited = await app.gql(
        'mutation ($id: UUID!) { updateCampaign(id: $id, input: { name: "Renamed" }) { id } }',
        { id: campaign.id },
        alice.token,
      );
      expect(edited.errors).toBeUndefined();
      await byToken.until((results) => results.length >= 2);
    } finally {
      for (const live of [byRevoked, byExpired, byToken]) live.close();
    }
  });

  it('is refused once expired, and when its secret is wrong or it is malformed', async () => {
    const { secret, apiKey } = await createKey(alice.token, { expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await app.request('GET', '/api/v1/agents/active/', { token: secret })).status).toBe(200);
    await app.prisma.apiKey.update({ where: { id: apiKey.id }, data: { expiresAt: new Date(Date.now() - 1_000) } });
    expect((await app.request('GET', '/api/v1/agents/active/', { token: secret })).status).toBe(401);

    const valid = (await createKey(alice.token)).secret;
    const last = valid.at(-1) === 'A' ? 'B' : 'A';
    for (const wrong of [`${valid.slice(0, -1)}${last}`, `${valid}x`, 'cfk_', 'cfk_0123456789abcdef_short']) {
      expect((await app.request('GET', '/api/v1/agents/active/', { token: wrong })).status).toBe(401);
    }
  });

  it('cannot be revoked by another customer, who gets a 404', async () => {
    const { apiKey } = await createKey(alice.token);
    const result = await app.gql(REVOKE, { id: apiKey.id }, bob.token);
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await app.prisma.apiKey.findUniqueOrThrow({ where: { id: apiKey.id } })).revokedAt).toBeNull();
  });
});

describe('the OpenAPI document', () => {
  it('names API keys as bearer credentials and the 403 of a read-only key on every change', async () => {
    const openapi = (await app.request('GET', '/api/v1/schema/')).json;
    expect(openapi.components.securitySchemes.bearerAuth.description).toMatch(/API key/);
    for (const operations of Object.values(openapi.paths) as Record<string, { responses: Record<string, unknown> }>[]) {
      for (const [method, operation] of Object.entries(operations)) {
        if (method === 'get') expect(operation.responses['403']).toBeUndefined();
        else expect(operation.responses['403']).toBeDefined();
      }
    }
  });
});
