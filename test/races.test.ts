import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { contactRows, customer, importGroup, type Customer } from './support/campaigns.js';

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

  // A group's total changes with each contact that joins or leaves it (no recount of the group): a move
  // sent several times at once is made once, and the totals stay the groups' live contacts.
  it('moving one contact to another group', async () => {
    const other = await importGroup(app, alice.token, contactRows(1));
    const patch = (group: string, body: Record<string, unknown>) =>
      app.request('PATCH', `/api/v1/contacts/groups/${group}/`, { token: alice.token, body });
    const created = await patch(alice.groupId, { phone_number: '+14155550166' });
    expect(created.status).toBe(200);
    const moves = await inParallel(() => patch(alice.groupId, { phone_number: '+14155550166', contact_group_id: other }));
    expect(moves.map((res) => res.status).filter((status) => ![200, 404, 409].includes(status))).toEqual([]);
    expect(moves.map((res) => res.status)).toContain(200);

    for (const group of [alice.groupId, other]) {
      const { total } = await app.prisma.contactGroup.findUniqueOrThrow({ where: { id: group } });
      expect(total).toBe(await app.prisma.contact.count({ where: { groupId: group, erasedAt: null } }));
    }
  });
});

// A rewrite of a contact waits for a change committed since it read the contact, then sees it: here an
// erasure, committed while the rewrite waits for the row (held by the test). The erased person's data
// stays gone and the rewrite answers 404.
describe.skipIf(inject('testDatabase').kind !== 'postgres')('a contact erased while a rewrite of it waits', () => {
  it('keeps the person erased', async () => {
    const made = await app.request('PATCH', `/api/v1/contacts/groups/${alice.groupId}/`, {
      token: alice.token,
      body: { phone_number: '+14155550133', data: { first_name: 'Erin' } },
    });
    expect(made.status).toBe(200);
    const holder = new pg.Client({ connectionString: (app.db.jobEngineConnection as { connectionString: string }).connectionString });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM contacts WHERE id = $1 FOR UPDATE', [made.json.id]);
      const rewrite = app.request('PATCH', `/api/v1/contacts/groups/${alice.groupId}/`, {
        token: alice.token,
        body: { phone_number: '+14155550133', data: { first_name: 'Erin', notes: 'again' } },
      });
      await expect
        .poll(
          async () => {
            // The statement's text there may still be the one before it: waiting is what shows.
            const { rows } = await holder.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            );
            return rows[0].n;
          },
          { timeout: 20_000 },
        )
        .toBe(1);
      await holder.query(`UPDATE contacts SET phone_number = NULL, name = '', data = '{}', erased_at = now() WHERE id = $1`, [
        made.json.id,
      ]);
      await holder.query('COMMIT');
      expect((await rewrite).status).toBe(404);
    } finally {
      await holder.end();
    }
    const row = await app.prisma.contact.findUniqueOrThrow({ where: { id: made.json.id } });
    expect([row.phoneNumber, row.name, row.data]).toEqual([null, '', {}]);
  });
});
