import { randomUUID } from 'node:crypto';
import type { Database } from '../../src/db/database.js';
import type { SqlSession } from '../../src/db/sql.js';
import { bearer, send } from './http.js';
import type { IdKind, IdRef } from './json-text.js';
import { testSql } from '../support/sql.js';

// The world the fuzz starts from: two customers with agents, contact groups, contacts, campaigns (a
// draft and a running one), credits, a do-not-call entry, and the call attempts and appointment that
// only the dialer writes; plus an administrator. Built through the public API as a client would, except
// for the dialer's rows.

export interface Party {
  id: string;
  token: string;
}

export interface Fixture {
  alice: Party;
  bob: Party;
  admin: Party;
}

export type TokenFor = (sub: string, role?: 'admin') => Promise<string>;

async function call(url: string, token: string, method: string, path: string, body: unknown): Promise<any> {
  const res = await send(url, {
    method,
    path,
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300 || res.json?.errors) throw new Error(`fixture ${method} ${path} failed: ${res.status} ${res.text}`);
  return res.json;
}

const gql = (url: string, token: string, query: string, variables: Record<string, unknown> = {}) =>
  call(url, token, 'POST', '/graphql', { query, variables }).then((body) => body.data);

async function seedCustomer(url: string, db: Database, party: Party, admin: Party, n: number): Promise<void> {
  const { agentTemplates } = await gql(url, party.token, '{ agentTemplates { id templateKey } }');
  const templateId = agentTemplates.find((t: { templateKey: string }) => t.templateKey === 'appointment_setter').id;
  const agentIds: string[] = [];
  for (const a of [1, 2, 3]) {
    const { createAgent } = await gql(url, party.token, 'mutation($input: CreateAgentInput!) { createAgent(input: $input) { id } }', {
      input: {
        templateId,
        name: `Front desk ${a}`,
        phoneNumber: `+141555600${n}${a}`,
        variables: { agent_name: 'Sam', company_name: 'Acme' },
      },
    });
    agentIds.push(createAgent.id);
  }
  const groupIds: string[] = [];
  for (const g of [1, 2]) {
    const csvData = [1, 2, 3].map((i) => ({
      Name: `Person ${n}${g}${i}`,
      Phone: `+1415557${n}${g}${i}0`,
      Email: `p${n}${g}${i}@example.com`,
    }));
    groupIds.push((await call(url, party.token, 'POST', '/api/v1/contacts/import/', { groupName: `Leads ${g}`, csvData })).groupId);
  }
  await gql(url, admin.token, 'mutation($input: GrantCreditsInput!) { grantCredits(input: $input) { id } }', {
    input: { userId: party.id, kind: 'top_up', amountCents: 100_000 },
  });
  const campaignIds: string[] = [];
  for (const groupId of groupIds) {
    const body = { name: `Campaign ${groupId.slice(-4)}`, agent_id: agentIds[0], contact_group_id: groupId };
    campaignIds.push((await call(url, party.token, 'POST', '/api/v1/contacts/contacts/', body)).id);
  }
  await call(url, party.token, 'POST', `/api/v1/campaigns/${campaignIds[1]}/dispatch/`, { triggered_by: 'fuzz' });
  await gql(url, party.token, 'mutation { addDoNotCall(input: { phoneNumber: "+14155559999", reason: "asked" }) { id } }');

  const contacts = await db.prisma.contact.findMany({ where: { groupId: groupIds[1] }, orderBy: { createdAt: 'asc' } });
  for (const [index, contact] of contacts.entries()) {
    const attempt = await db.prisma.callAttempt.create({
      data: {
        userId: party.id,
        campaignId: campaignIds[1]!,
        contactId: contact.id,
        attemptNumber: 1,
        status: index === 0 ? 'completed' : 'no_answer',
        toNumber: contact.phoneNumber ?? '+14155550000',
        durationSeconds: index === 0 ? 60 : 0,
        sentiment: index === 0 ? 'positive' : 'unknown',
        summary: index === 0 ? 'Booked' : null,
      },
    });
    if (index === 0) {
      await db.prisma.appointment.create({
        data: {
          userId: party.id,
          contactId: contact.id,
          campaignId: campaignIds[1]!,
          callAttemptId: attempt.id,
          scheduledAt: new Date(Date.now() + 7 * 24 * 3600_000),
          contactSnapshot: { name: contact.name },
          appointmentData: { notes: 'Cleaning' },
        },
      });
    }
  }
}

export async function seedFixture(url: string, db: Database, tokenFor: TokenFor): Promise<Fixture> {
  const party = async (role?: 'admin'): Promise<Party> => {
    const id = randomUUID();
    return { id, token: await tokenFor(id, role) };
  };
  const fixture = { alice: await party(), bob: await party(), admin: await party('admin') };
  await seedCustomer(url, db, fixture.alice, fixture.admin, 1);
  await seedCustomer(url, db, fixture.bob, fixture.admin, 2);
  return fixture;
}

const TABLES: Record<IdKind, string> = {
  agent: 'agents',
  template: 'agent_templates',
  group: 'contact_groups',
  contact: 'contacts',
  campaign: 'campaigns',
  callAttempt: 'call_attempts',
  appointment: 'appointments',
  creditTransaction: 'credit_transactions',
  user: 'users',
};

/** An id no row has: what a reference to a kind with no rows left resolves to. */
const NOBODY = '00000000-0000-4000-8000-000000000000';

/** The ids that exist now, by kind and owner, read again from time to time as requests create and delete them. */
export class IdPool {
  private constructor(private readonly ids: Map<string, string[]>) {}

  static async load(sql: SqlSession): Promise<IdPool> {
    const parts = Object.entries(TABLES).map(([kind, table]) => {
      const owner = kind === 'template' ? 'NULL' : kind === 'user' ? 'id::text' : 'user_id::text';
      // Newest first (ids are time-ordered), and live agents before archived ones.
      const order = kind === 'agent' ? 'is_active DESC, id DESC' : 'id DESC';
      return `(SELECT '${kind}' AS kind, id::text AS id, ${owner} AS owner FROM ${table} ORDER BY ${order} LIMIT 500)`;
    });
    const rows = await testSql(sql).query<{ kind: string; id: string; owner: string | null }>(parts.join(' UNION ALL '));
    const ids = new Map<string, string[]>();
    for (const row of rows) {
      for (const key of [`${row.kind}:${row.owner}`, `${row.kind}:*`]) ids.set(key, [...(ids.get(key) ?? []), row.id]);
    }
    return new IdPool(ids);
  }

  /** The id `ref` stands for when `self` calls and `other` is the other customer. */
  idOf(ref: IdRef, self: string, other: string): string {
    const owned = this.ids.get(`${ref.kind}:${ref.owner === 'self' ? self : other}`);
    const candidates = owned?.length ? owned : ref.kind === 'template' ? this.ids.get('template:*') : undefined;
    return candidates?.length ? candidates[ref.pick % candidates.length]! : NOBODY;
  }
}
