import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { customer, type Customer } from './support/campaigns.js';
import { CREATE_AGENT, nextPhoneNumber, templateId } from './support/fixtures.js';

// Idempotency keys on both surfaces: a POST with `Idempotency-Key` runs once per customer and key, its
// repeats get the first response again; the key with another request is refused; a refusal is not kept.

let app: TestApp;
let alice: Customer;
let bob: Customer;
beforeAll(async () => {
  // Webhook endpoints on this machine, so that saving one asks no DNS (nothing is delivered here).
  app = await startTestApp({ maxImportBodyBytes: 64 * 1024, settings: { webhooks: { allowPrivateUrls: true } } });
  [alice, bob] = await Promise.all([customer(app, { contacts: 2 }), customer(app, { contacts: 2 })]);
});
afterAll(() => app.close());

let keys = 0;
const newKey = () => `key-${Date.now()}-${(keys += 1)}`;

function createCampaign(who: Customer, key: string | undefined, name = 'Spring recall', token = who.token) {
  return app.request('POST', '/api/v1/contacts/contacts/', {
    token,
    headers: key === undefined ? {} : { 'idempotency-key': key },
    body: { name, agent_id: who.agent.id, contact_group_id: who.groupId },
  });
}
const campaignsNamed = (who: Customer, name: string) => app.prisma.campaign.count({ where: { userId: who.id, name } });

describe('a v1 POST with an Idempotency-Key', () => {
  it('runs once; a repeat gets the first status and body, marked as replayed', async () => {
    const key = newKey();
    const first = await createCampaign(alice, key, 'Once');
    const again = await createCampaign(alice, key, 'Once');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await campaignsNamed(alice, 'Once')).toBe(1);
    // Without a key, the same request acts again, as before.
    expect((await createCampaign(alice, undefined, 'Once')).status).toBe(201);
    expect(await campaignsNamed(alice, 'Once')).toBe(2);
  });

  it('refuses the key with another request, acting on nothing', async () => {
    const key = newKey();
    expect((await createCampaign(alice, key, 'First use')).status).toBe(201);
    const other = await createCampaign(alice, key, 'Second use');
    expect(other.status).toBe(400);
    expect(other.json['Idempotency-Key'][0]).toMatch(/used with another request/);
    expect(await campaignsNamed(alice, 'Second use')).toBe(0);
  });

  it('runs once when repeats arrive together, and answers them all alike', async () => {
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 6 }, () => createCampaign(alice, key, 'Together')));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(5);
    expect(await campaignsNamed(alice, 'Together')).toBe(1);
  });

  it('keeps keys per customer', async () => {
    const key = newKey();
    const theirs = await createCampaign(alice, key, 'Per customer');
    const ours = await createCampaign(bob, key, 'Per customer');
    expect(ours.status).toBe(201);
    expect(ours.headers.get('idempotent-replayed')).toBeNull();
    expect(ours.json.id).not.toBe(theirs.json.id);
  });

  it('keeps no refusal: the corrected request runs with the same key', async () => {
    const key = newKey();
    const refused = await app.request('POST', '/api/v1/contacts/contacts/', {
      token: alice.token,
      headers: { 'idempotency-key': key },
      body: { name: 'Fixed', agent_id: alice.agent.id, contact_group_id: alice.groupId, concurrent_calls: 0 },
    });
    expect(refused.status).toBe(400);
    const fixed = await createCampaign(alice, key, 'Fixed');
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
    expect(await campaignsNamed(alice, 'Fixed')).toBe(1);
  });

  it('forgets a key after 24 hours', async () => {
    const key = newKey();
    expect((await createCampaign(alice, key, 'Next day')).status).toBe(201);
    await app.prisma.idempotencyKey.updateMany({
      where: { userId: alice.id, key },
      data: { createdAt: new Date(Date.now() - 25 * 3_600_000) },
    });
    const later = await createCampaign(alice, key, 'Next day');
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(await campaignsNamed(alice, 'Next day')).toBe(2);
  });

  it('refuses a key that is empty, too long or not visible ASCII, acting on nothing', async () => {
    for (const key of ['x'.repeat(256), 'two words', 'clé']) {
      const res = await createCampaign(alice, key, 'Bad key');
      expect(res.status).toBe(400);
      expect(Object.keys(res.json)).toEqual(['Idempotency-Key']);
    }
    expect(await campaignsNamed(alice, 'Bad key')).toBe(0);
  });

  it('replays a dispatch', async () => {
    const campaign = (await createCampaign(alice, undefined, 'Dispatched')).json;
    const key = newKey();
    const dispatch = () =>
      app.request('POST', `/api/v1/campaigns/${campaign.id}/dispatch/`, {
        token: alice.token,
        headers: { 'idempotency-key': key },
        body: {},
      });
    const first = await dispatch();
    const again = await dispatch();
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('takes an upload as the same request whatever its multipart boundary', async () => {
    const key = newKey();
    const upload = () => {
      const form = new FormData();
      form.set('groupName', 'Uploaded once');
      form.set('file', new Blob(['Phone\n(415) 555-0142\n'], { type: 'text/csv' }), 'contacts.csv');
      return app.request('POST', '/api/v1/contacts/import/', { token: alice.token, headers: { 'idempotency-key': key }, raw: form });
    };
    const first = await upload();
    const again = await upload();
    expect(first.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await app.prisma.contactGroup.count({ where: { userId: alice.id, name: 'Uploaded once' } })).toBe(1);
  });

  it('refuses a body above the largest limit with a 413, declared or not', async () => {
    const rows = Array.from({ length: 3_000 }, (_, i) => ({ Phone: `+1415556${String(i).padStart(4, '0')}` }));
    const text = JSON.stringify({ group_name: 'Too big', csv_data: rows });
    const declared = await app.request('POST', '/api/v1/contacts/import/', {
      token: alice.token,
      headers: { 'idempotency-key': newKey(), 'content-type': 'application/json' },
      raw: text,
    });
    expect(declared.status).toBe(413);
    const chunked = await fetch(`${app.url}/api/v1/contacts/import/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'idempotency-key': newKey(), 'content-type': 'application/json' },
      body: new Blob([text]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await app.prisma.contactGroup.count({ where: { userId: alice.id, name: 'Too big' } })).toBe(0);
  });
});

describe('a GraphQL mutation with an Idempotency-Key', () => {
  const createAgent = async (key: string, name: string, phoneNumber: string) =>
    app.request('POST', '/graphql', {
      token: bob.token,
      headers: { 'idempotency-key': key },
      body: {
        query: CREATE_AGENT,
        variables: {
          input: { templateId: await templateId(app), name, phoneNumber, variables: { agent_name: 'Sam', company_name: 'Acme' } },
        },
      },
    });
  const agentsNamed = (name: string) => app.prisma.agent.count({ where: { userId: bob.id, name } });

  it('runs once and answers its repeat with the same bytes', async () => {
    const key = newKey();
    const number = nextPhoneNumber();
    const first = await createAgent(key, 'Idempotent agent', number);
    const again = await createAgent(key, 'Idempotent agent', number);
    expect(first.json.data.createAgent.name).toBe('Idempotent agent');
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await agentsNamed('Idempotent agent')).toBe(1);
  });

  it('keeps no answer whose every mutation was refused, and refuses a reused key in GraphQL shape', async () => {
    const key = newKey();
    const refused = await createAgent(key, 'x'.repeat(300), nextPhoneNumber());
    expect(refused.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const number = nextPhoneNumber();
    const fixed = await createAgent(key, 'Fixed agent', number);
    expect(fixed.json.data.createAgent.name).toBe('Fixed agent');
    const reused = await createAgent(key, 'Another agent', nextPhoneNumber());
    expect(reused.status).toBe(400);
    expect(reused.json.errors[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect(reused.json.errors[0].message).toMatch(/used with another request/);
    expect(await agentsNamed('Another agent')).toBe(0);
  });
});

describe('a repeat by another credential of the same customer', () => {
  const CREATE_KEY = 'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { secret apiKey { id } } }';
  const keyOf = async (who: Customer, scope: 'read' | 'full') => {
    const created = await app.gql(CREATE_KEY, { input: { name: `A ${scope} key`, scope } }, who.token);
    return created.data.createApiKey.secret as string;
  };
  const graphql = (token: string, key: string, query: string, variables: Record<string, unknown>) =>
    app.request('POST', '/graphql', { token, headers: { 'idempotency-key': key }, body: { query, variables } });

  it('on v1: a read key is refused its write (403) before any replay; another key gets 409; each keeps its own', async () => {
    const [readKey, fullKey, otherFullKey] = await Promise.all([keyOf(alice, 'read'), keyOf(alice, 'full'), keyOf(alice, 'full')]);
    const key = newKey();
    const first = await createCampaign(alice, key, 'By the token');
    expect(first.status).toBe(201);

    const byReadKey = await createCampaign(alice, key, 'By the token', readKey);
    expect(byReadKey.status).toBe(403);
    expect(byReadKey.json.detail).toMatch(/may only read/);
    expect(byReadKey.headers.get('idempotent-replayed')).toBeNull();

    const byFullKey = await createCampaign(alice, key, 'By the token', fullKey);
    expect(byFullKey.status).toBe(409);
    expect(byFullKey.json).toMatchObject({ reason: 'idempotency_key_other_credential' });
    expect(byFullKey.text).not.toContain(first.json.id);
    expect(await campaignsNamed(alice, 'By the token')).toBe(1);

    // The refusals took nothing from the token's answer.
    const again = await createCampaign(alice, key, 'By the token');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);

    // A key's answer is its own too: neither a token nor another key gets it.
    const keysKey = newKey();
    const byKey = await createCampaign(alice, keysKey, 'By a key', fullKey);
    expect(byKey.status).toBe(201);
    for (const token of [alice.token, otherFullKey]) {
      const other = await createCampaign(alice, keysKey, 'By a key', token);
      expect(other.status).toBe(409);
      expect(other.json.reason).toBe('idempotency_key_other_credential');
    }
    const repeat = await createCampaign(alice, keysKey, 'By a key', fullKey);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.text).toBe(byKey.text);
    expect(await campaignsNamed(alice, 'By a key')).toBe(1);
  });

  it("on GraphQL: no key is given the secret of a key a token made, nor a webhook's signing secret", async () => {
    const [readKey, fullKey] = await Promise.all([keyOf(bob, 'read'), keyOf(bob, 'full')]);
    const key = newKey();
    const variables = { input: { name: 'Made by the token', scope: 'full' } };
    const first = await graphql(bob.token, key, CREATE_KEY, variables);
    const secret = first.json.data.createApiKey.secret as string;
    const keysBefore = await app.prisma.apiKey.count({ where: { userId: bob.id } });

    const byReadKey = await graphql(readKey, key, CREATE_KEY, variables);
    expect(byReadKey.json.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(byReadKey.headers.get('idempotent-replayed')).toBeNull();
    expect(byReadKey.text).not.toContain(secret);

    const byFullKey = await graphql(fullKey, key, CREATE_KEY, variables);
    expect(byFullKey.status).toBe(409);
    expect(byFullKey.json.errors[0].extensions).toMatchObject({ code: 'CONFLICT', reason: 'idempotency_key_other_credential' });
    expect(byFullKey.text).not.toContain(secret);
    expect(await app.prisma.apiKey.count({ where: { userId: bob.id } })).toBe(keysBefore);
    expect((await graphql(bob.token, key, CREATE_KEY, variables)).text).toBe(first.text);

    const webhookKey = newKey();
    const CREATE_ENDPOINT = 'mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret } }';
    const endpoint = { input: { url: 'http://127.0.0.1:9/callflow' } };
    const made = await graphql(bob.token, webhookKey, CREATE_ENDPOINT, endpoint);
    const signingSecret = made.json.data.createWebhookEndpoint.secret as string;
    for (const token of [readKey, fullKey]) {
      const other = await graphql(token, webhookKey, CREATE_ENDPOINT, endpoint);
      expect(other.text).not.toContain(signingSecret);
      expect(other.json.errors[0].extensions.code).toBe(token === readKey ? 'FORBIDDEN' : 'CONFLICT');
    }
  });

  it("does not replay an admin token's answer to the same user's other tokens", async () => {
    const admin = await app.token(alice.id, 'admin');
    const key = newKey();
    const GRANT = 'mutation ($input: GrantCreditsInput!) { grantCredits(input: $input) { id } }';
    const variables = { input: { userId: bob.id, kind: 'top_up', amountCents: 100 } };
    const granted = await graphql(admin, key, GRANT, variables);
    expect(granted.json.data.grantCredits.id).toBeDefined();
    const byUser = await graphql(alice.token, key, GRANT, variables);
    expect(byUser.status).toBe(409);
    expect(byUser.json.errors[0].extensions.reason).toBe('idempotency_key_other_credential');
    // Another admin token of the same user is the same credential: it gets the answer again.
    const byAdmin = await graphql(await app.token(alice.id, 'admin'), key, GRANT, variables);
    expect(byAdmin.headers.get('idempotent-replayed')).toBe('true');
    expect(byAdmin.text).toBe(granted.text);
  });
});

describe('the OpenAPI document', () => {
  it('offers the Idempotency-Key header on every POST, and only there', async () => {
    const openapi = (await app.request('GET', '/api/v1/schema/')).json;
    for (const operations of Object.values(openapi.paths) as Record<string, { parameters?: { name: string; in: string }[] }>[]) {
      for (const [method, operation] of Object.entries(operations)) {
        const offered = (operation.parameters ?? []).some((p) => p.name === 'Idempotency-Key' && p.in === 'header');
        expect(offered).toBe(method === 'post');
      }
    }
  });
});
