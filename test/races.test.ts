import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { customer, type Customer } from './support/campaigns.js';

// Requests that change the same rows at the same moment: whichever loses the race gets a 4xx (or its
// work done by the winner), never a 500, and the rows end up as one request alone would leave them.

let app: TestApp;
let alice: Customer;

beforeAll(async () => {
  app = await startTestApp();
  alice = await customer(app);
});
afterAll(() => app.close());

const TIMES = 8;
const codesOf = (results: { errors?: { extensions?: Record<string, any> }[] }[]) =>
  results.map((r) => r.errors?.[0]?.extensions?.code ?? 'ok');
const inParallel = <T>(send: () => Promise<T>) => Promise.all(Array.from({ length: TIMES }, send));

describe('the same change sent several times at once', () => {
  it('adding and removing one do-not-call number', async () => {
    const add = await inParallel(() =>
      app.gql('mutation { addDoNotCall(input: { phoneNumber: "+14155550188" }) { id } }', {}, alice.token),
    );
    expect(codesOf(add).filter((code) => code !== 'ok' && code !== 'CONFLICT')).toEqual([]);
    expect(await app.prisma.doNotCallEntry.count({ where: { userId: alice.id, phoneNumber: '+14155550188' } })).toBe(1);
    const remove = await inParallel(() => app.gql('mutation { removeDoNotCall(phoneNumber: "+14155550188") { id } }', {}, alice.token));
    expect(codesOf(remove).filter((code) => !['ok', 'CONFLICT', 'NOT_FOUND'].includes(code))).toEqual([]);
    expect(codesOf(remove)).toContain('ok');
    expect(await app.prisma.doNotCallEntry.count({ where: { userId: alice.id, phoneNumber: '+14155550188' } })).toBe(0);
  });

  it('creating a template with one key', async () => {
    const admin = await app.token(randomUUID(), 'admin');
    const input = { name: 'Raced', templateKey: 'raced_template', systemPromptTemplate: 'Hi', placeholderSchema: { type: 'object' } };
    const results = await inParallel(() =>
      app.gql('mutation($i: CreateAgentTemplateInput!) { createAgentTemplate(input: $i) { id } }', { i: input }, admin),
    );
    expect(codesOf(results).filter((code) => code === 'ok')).toHaveLength(1);
    expect(codesOf(results).filter((code) => !['ok', 'CONFLICT', 'BAD_USER_INPUT'].includes(code))).toEqual([]);
  });

  it('creating one contact by its number, on GraphQL and on v1', async () => {
    const graphql = await inParallel(() =>
      app.gql(
        'mutation($g: UUID!) { upsertContact(groupId: $g, input: { phoneNumber: "+14155550199" }) { id } }',
        { g: alice.groupId },
        alice.token,
      ),
    );
    expect(codesOf(graphql).filter((code) => code !== 'ok' && code !== 'CONFLICT')).toEqual([]);
    const v1 = await inParallel(() =>
      app.request('PATCH', `/api/v1/contacts/groups/${alice.groupId}/`, { token: alice.token, body: { phone_number: '+14155550177' } }),
    );
    expect(v1.map((res) => res.status).filter((status) => status !== 200 && status !== 409)).toEqual([]);
    const numbers = (await app.prisma.contact.findMany({ where: { groupId: alice.groupId }, select: { phoneNumber: true } })).map(
      (c) => c.phoneNumber,
    );
    expect(numbers.filter((n) => n === '+14155550199' || n === '+14155550177').sort()).toEqual(['+14155550177', '+14155550199']);
  });
});
