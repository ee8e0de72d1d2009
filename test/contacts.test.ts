import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createAgent, insertCampaign } from './support/fixtures.js';
import { testSql } from './support/sql.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

async function importGroup(token: string, name: string, rows: Record<string, string>[]) {
  const res = await app.request('POST', '/api/v1/contacts/import/', { token, body: { groupName: name, csvData: rows } });
  expect(res.status).toBe(201);
  return res.json.groupId as string;
}

async function contactIds(groupId: string) {
  const rows = await app.prisma.contact.findMany({ where: { groupId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return rows.map((r) => r.id);
}

const total = async (groupId: string) => (await app.prisma.contactGroup.findUniqueOrThrow({ where: { id: groupId } })).total;

describe('GET and DELETE /api/v1/contacts/contacts/{id}/', () => {
  it('returns the flattened contact and deletes it, keeping the group total right', async () => {
    const token = await app.token();
    const group = await importGroup(token, 'g', [
      { 'First Name': 'Lin', Surname: 'Wu', Phone: '+1 415 555 0150', Email: 'lin@example.com', Address: '1 Main St' },
      { 'First Name': 'Bo', Phone: '+1 415 555 0151' },
    ]);
    const [lin, bo] = await contactIds(group);
    const res = await app.request('GET', `/api/v1/contacts/contacts/${lin}/`, { token });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      id: lin,
      first_name: 'Lin',
      last_name: 'Wu',
      email: 'lin@example.com',
      address: '1 Main St',
      phone_number: '+14155550150',
      phone_numbers: [],
      custom_fields: {},
      csv_headers: ['First Name', 'Surname', 'Phone', 'Email', 'Address'],
      contact_group_id: group,
      status: 'active',
      data: expect.objectContaining({ first_name: 'Lin', phone_number: '+1 415 555 0150' }),
    });

    const deleted = await app.request('DELETE', `/api/v1/contacts/contacts/${bo}/`, { token });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(await total(group)).toBe(1);
    expect((await app.request('GET', `/api/v1/contacts/contacts/${bo}/`, { token })).status).toBe(404);
  });
});

describe('PATCH /api/v1/contacts/groups/{id}/', () => {
  let token: string;
  let groupA: string;
  let groupB: string;
  beforeAll(async () => {
    token = await app.token();
    groupA = await importGroup(token, 'A', [{ Name: 'Ann Lee', Phone: '+1 415 555 0160', Company: 'Acme' }]);
    groupB = await importGroup(token, 'B', [{ Name: 'Ben Ode', Phone: '+1 415 555 0170' }]);
  });
  const patch = (group: string, body: unknown) => app.request('PATCH', `/api/v1/contacts/groups/${group}/`, { token, body });

  it('creates a contact that is not in the group yet (200 with the contact)', async () => {
    const res = await patch(groupA, { phone_number: '(415) 555-0161', data: { first_name: 'Cy', Team: 'Blue' } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      phone_number: '+14155550161',
      first_name: 'Cy',
      custom_fields: { Team: 'Blue' },
      contact_group_id: groupA,
      status: 'active',
      csv_headers: ['Name', 'Phone', 'Company'],
    });
    expect(await total(groupA)).toBe(2);
  });

  it('merges data into the contact with that number', async () => {
    const res = await patch(groupA, { phone_number: '+14155550160', data: { Email: 'ann@example.com', Company: 'Acme Corp' } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      first_name: 'Ann',
      last_name: 'Lee',
      email: 'ann@example.com',
      custom_fields: { Company: 'Acme Corp' },
    });
    expect(await total(groupA)).toBe(2);
  });

  it('moves the contact to another group, keeping both totals right', async () => {
    const res = await patch(groupA, { phone_number: '+14155550161', contact_group_id: groupB });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ contact_group_id: groupB, first_name: 'Cy', csv_headers: ['Name', 'Phone'] });
    expect(await total(groupA)).toBe(1);
    expect(await total(groupB)).toBe(2);
  });

  it('merges into the target’s contact when the target group already has the number', async () => {
    await patch(groupB, { phone_number: '+14155550160', data: { Note: 'also in B' } });
    const res = await patch(groupA, { phone_number: '+14155550160', contact_group_id: groupB });
    expect(res.json).toMatchObject({
      contact_group_id: groupB,
      first_name: 'Ann',
      custom_fields: { Company: 'Acme Corp', Note: 'also in B' },
    });
    expect(await total(groupA)).toBe(0);
    expect(await total(groupB)).toBe(3);
  });

  it('marks a number on the do-not-call list, and an unreadable one invalid', async () => {
    await app.gql('mutation { addDoNotCall(input: { phoneNumber: "+1 415 555 0199" }) { id } }', {}, token);
    expect((await patch(groupA, { phone_number: '415-555-0199' })).json.status).toBe('do_not_call');
    expect((await patch(groupA, { phone_number: 'call me maybe' })).json).toMatchObject({
      status: 'invalid',
      phone_number: 'call me maybe',
    });
  });

  it('refuses bad bodies with field errors and changes nothing', async () => {
    const stranger = await importGroup(await app.token(), 'theirs', [{ Phone: '+14155550180' }]);
    const before = await app.prisma.contact.count();
    expect((await patch(groupA, {})).json).toEqual({ phone_number: ['This field is required.'] });
    expect((await patch(groupA, { phone_number: 'x'.repeat(33) })).json).toEqual({
      phone_number: ['Ensure this field has no more than 32 characters.'],
    });
    expect((await patch(groupA, { phone_number: '+14155550160', data: ['x'] })).status).toBe(400);
    expect((await patch(groupA, { phone_number: '+14155550160', data: { nested: { a: 1 } } })).json).toEqual({
      'data.nested': ['Expected a text, number or boolean value.'],
    });
    expect((await patch(groupA, { phone_number: '+14155550160', contact_group_id: stranger })).json).toEqual({
      contact_group_id: ['No contact group with this id.'],
    });
    expect(await app.prisma.contact.count()).toBe(before);
  });
});

describe('DELETE /api/v1/contacts/groups/{id}/', () => {
  it('deletes the group and its contacts (204)', async () => {
    const token = await app.token();
    const group = await importGroup(token, 'bye', [{ Phone: '+14155550190' }, { Phone: '+14155550191' }]);
    const res = await app.request('DELETE', `/api/v1/contacts/groups/${group}/`, { token });
    expect(res.status).toBe(204);
    expect(await app.prisma.contact.count({ where: { groupId: group } })).toBe(0);
    expect(await app.prisma.contactGroup.findUnique({ where: { id: group } })).toBeNull();
  });

  it('is refused with 409 while a running campaign uses the group', async () => {
    const owner = randomUUID();
    const token = await app.token(owner);
    const group = await importGroup(token, 'busy', [{ Phone: '+14155550192' }]);
    const agent = await createAgent(app, token);
    const campaign = await app.prisma.campaign.create({
      data: { userId: owner, agentId: agent.id, contactGroupId: group, name: 'Live', status: 'running' },
    });
    const res = await app.request('DELETE', `/api/v1/contacts/groups/${group}/`, { token });
    expect(res.status).toBe(409);
    expect(res.json).toEqual({ detail: expect.stringContaining('Live'), reason: 'contact_group_in_use' });
    expect(await app.prisma.contact.count({ where: { groupId: group } })).toBe(1);

    const gql = await app.gql('mutation($id: UUID!) { deleteContactGroup(id: $id) { id } }', { id: group }, token);
    expect(gql.errors![0]!.extensions).toMatchObject({ code: 'CONFLICT', reason: 'contact_group_in_use' });

    await app.prisma.campaign.update({ where: { id: campaign.id }, data: { status: 'completed' } });
    expect((await app.request('DELETE', `/api/v1/contacts/groups/${group}/`, { token })).status).toBe(204);
    expect(await app.prisma.campaign.findUnique({ where: { id: campaign.id } })).toBeNull();
  });
});

describe('a contact belongs to its group’s user', () => {
  it('is refused by the database when its user is not its group’s', async () => {
    const [owner, stranger] = [randomUUID(), randomUUID()];
    const group = await importGroup(await app.token(owner), 'mine', [{ Phone: '+14155550194' }]);
    await app.prisma.user.create({ data: { id: stranger } });
    await expect(
      testSql(app.sql).query(
        'INSERT INTO contacts (id, user_id, contact_group_id, phone_number, updated_at) VALUES ($1, $2, $3, $4, now())',
        [randomUUID(), stranger, group, '+14155550195'],
      ),
    ).rejects.toThrow(/contacts_contact_group_id_user_id_fkey/);
    expect(await app.prisma.contact.count({ where: { groupId: group } })).toBe(1);
  });

  it('goes with its user, through the group', async () => {
    const owner = randomUUID();
    const group = await importGroup(await app.token(owner), 'leaving', [{ Phone: '+14155550196' }, { Phone: '+14155550197' }]);
    await app.prisma.user.delete({ where: { id: owner } });
    expect(await app.prisma.contactGroup.count({ where: { id: group } })).toBe(0);
    expect(await app.prisma.contact.count({ where: { userId: owner } })).toBe(0);
  });
});

describe('another user’s groups and contacts do not exist for you', () => {
  it('answers 404 / NOT_FOUND for every read, patch and delete, and changes nothing', async () => {
    const owner = await app.token();
    const group = await importGroup(owner, 'private', [{ Phone: '+14155550193', Name: 'Pat Private' }]);
    const [contact] = await contactIds(group);
    const stranger = await app.token();

    expect((await app.request('GET', `/api/v1/contacts/contacts/${contact}/`, { token: stranger })).status).toBe(404);
    expect((await app.request('DELETE', `/api/v1/contacts/contacts/${contact}/`, { token: stranger })).status).toBe(404);
    const patched = await app.request('PATCH', `/api/v1/contacts/groups/${group}/`, {
      token: stranger,
      body: { phone_number: '+14155550194' },
    });
    expect(patched.status).toBe(404);
    expect(patched.json).toEqual({ detail: 'Not found.' });
    expect((await app.request('DELETE', `/api/v1/contacts/groups/${group}/`, { token: stranger })).status).toBe(404);

    for (const [query, variables] of [
      ['query($id: UUID!) { contactGroup(id: $id) { id } }', { id: group }],
      ['query($id: UUID!) { contact(id: $id) { id } }', { id: contact }],
      ['mutation($id: UUID!) { updateContactGroup(id: $id, input: { name: "x" }) { id } }', { id: group }],
      ['mutation($id: UUID!) { upsertContact(groupId: $id, input: { phoneNumber: "+14155550195" }) { id } }', { id: group }],
      ['mutation($id: UUID!) { updateContact(id: $id, input: { status: do_not_call }) { id } }', { id: contact }],
      ['mutation($id: UUID!) { deleteContact(id: $id) { id } }', { id: contact }],
      ['mutation($id: UUID!) { deleteContactGroup(id: $id) { id } }', { id: group }],
    ] as const) {
      const result = await app.gql(query, variables, stranger);
      expect(result.errors?.[0]?.extensions?.code, query).toBe('NOT_FOUND');
    }
    const lists = await app.gql('{ contactGroups(first: 10) { totalCount } doNotCallEntries(first: 10) { totalCount } }', {}, stranger);
    expect(lists.data).toEqual({ contactGroups: { totalCount: 0 }, doNotCallEntries: { totalCount: 0 } });

    const still = await app.prisma.contact.findUniqueOrThrow({ where: { id: contact } });
    expect(still).toMatchObject({ status: 'active', groupId: group });
    expect(await total(group)).toBe(1);
  });
});

describe('GraphQL contacts', () => {
  let token: string;
  let group: string;
  beforeAll(async () => {
    token = await app.token();
    group = await importGroup(token, 'Browse', [
      { Name: 'Alice Archer', Phone: '+1 415 555 0101' },
      { Name: 'Bob Baker', Phone: '+1 415 555 0102' },
      { Name: 'Carol Cooper', Phone: 'nope' },
      { Name: 'Dan Dalton', Phone: '+1 212 555 0103' },
    ]);
  });

  const browse = async (args: string) => {
    const result = await app.gql(
      `query($id: UUID!) { contactGroup(id: $id) { name total contacts(first: 10${args}) { totalCount edges { node { name status } } } } }`,
      { id: group },
      token,
    );
    expect(result.errors).toBeUndefined();
    return result.data.contactGroup.contacts;
  };

  it('lists, filters by status and searches by name or number', async () => {
    expect((await browse('')).totalCount).toBe(4);
    expect((await browse(', status: invalid')).edges.map((e: any) => e.node.name)).toEqual(['Carol Cooper']);
    expect((await browse(', search: "bAKer"')).edges.map((e: any) => e.node.name)).toEqual(['Bob Baker']);
    expect((await browse(', search: "(212) 555"')).edges.map((e: any) => e.node.name)).toEqual(['Dan Dalton']);
  });

  it('lists the groups and reads a contact with its fields', async () => {
    const groups = await app.gql('{ contactGroups(first: 5) { totalCount edges { node { name total csvHeaders } } } }', {}, token);
    expect(groups.data.contactGroups.edges[0].node).toEqual({ name: 'Browse', total: 4, csvHeaders: ['Name', 'Phone'] });
    const [id] = await contactIds(group);
    const contact = await app.gql(
      'query($id: UUID!) { contact(id: $id) { firstName lastName phoneNumber status group { name } customFields phoneNumbers { number } } }',
      { id },
      token,
    );
    expect(contact.data.contact).toEqual({
      firstName: 'Alice',
      lastName: 'Archer',
      phoneNumber: '+14155550101',
      status: 'active',
      group: { name: 'Browse' },
      customFields: {},
      phoneNumbers: [],
    });
  });

  it('renames a group', async () => {
    const result = await app.gql(
      'mutation($id: UUID!) { updateContactGroup(id: $id, input: { name: "Renamed", description: "New" }) { name description } }',
      { id: group },
      token,
    );
    expect(result.data.updateContactGroup).toEqual({ name: 'Renamed', description: 'New' });
    const blank = await app.gql(
      'mutation($id: UUID!) { updateContactGroup(id: $id, input: { name: " " }) { name } }',
      { id: group },
      token,
    );
    expect(blank.errors![0]!.extensions!.fieldErrors).toEqual({ name: ['This field may not be blank.'] });
  });

  it('upserts, updates and deletes contacts', async () => {
    const upserted = await app.gql(
      'mutation($g: UUID!) { upsertContact(groupId: $g, input: { phoneNumber: "+14155550109", data: { first_name: "Eve" } }) { id firstName status } }',
      { g: group },
      token,
    );
    expect(upserted.data.upsertContact).toMatchObject({ firstName: 'Eve', status: 'active' });
    const id = upserted.data.upsertContact.id;
    const updated = await app.gql(
      'mutation($id: UUID!) { updateContact(id: $id, input: { data: { last_name: "Evans", Vip: "yes" } }) { name customFields } }',
      { id },
      token,
    );
    expect(updated.data.updateContact).toEqual({ name: 'Eve Evans', customFields: { Vip: 'yes' } });
    const deleted = await app.gql('mutation($id: UUID!) { deleteContact(id: $id) { id } }', { id }, token);
    expect(deleted.data.deleteContact).toEqual({ id });
    expect(await total(group)).toBe(4);
  });
});

describe('the do-not-call list', () => {
  it('adding a number marks its contacts in every group; removing it makes them callable again', async () => {
    const token = await app.token();
    const g1 = await importGroup(token, 'one', [{ Phone: '+1 415 555 0120' }, { Phone: '+1 415 555 0121' }]);
    const g2 = await importGroup(token, 'two', [{ Phone: '(415) 555-0120' }]);
    const statusOf = async (g: string) =>
      (await app.prisma.contact.findMany({ where: { groupId: g }, orderBy: { phoneNumber: 'asc' } })).map((c) => c.status);

    const added = await app.gql(
      'mutation { addDoNotCall(input: { phoneNumber: "415 555 0120", reason: "asked" }) { phoneNumber reason source } }',
      {},
      token,
    );
    expect(added.data.addDoNotCall).toEqual({ phoneNumber: '+14155550120', reason: 'asked', source: 'manual' });
    expect(await statusOf(g1)).toEqual(['do_not_call', 'active']);
    expect(await statusOf(g2)).toEqual(['do_not_call']);

    const list = await app.gql('{ doNotCallEntries(first: 10) { totalCount edges { node { phoneNumber } } } }', {}, token);
    expect(list.data.doNotCallEntries.totalCount).toBe(1);

    const removed = await app.gql('mutation { removeDoNotCall(phoneNumber: "+14155550120") { phoneNumber } }', {}, token);
    expect(removed.data.removeDoNotCall.phoneNumber).toBe('+14155550120');
    expect(await statusOf(g1)).toEqual(['active', 'active']);
    expect(await statusOf(g2)).toEqual(['active']);

    const again = await app.gql('mutation { removeDoNotCall(phoneNumber: "+14155550120") { phoneNumber } }', {}, token);
    expect(again.errors![0]!.extensions!.code).toBe('NOT_FOUND');
    const bad = await app.gql('mutation { addDoNotCall(input: { phoneNumber: "12" }) { id } }', {}, token);
    expect(bad.errors![0]!.extensions!.fieldErrors).toEqual({ phoneNumber: ['Enter a valid phone number, e.g. +14155552671.'] });
  });

  it('updateContact to do_not_call puts the number on the list for every group, and back', async () => {
    const token = await app.token();
    const g1 = await importGroup(token, 'one', [{ Phone: '+1 415 555 0130' }]);
    const g2 = await importGroup(token, 'two', [{ Phone: '+1 415 555 0130' }]);
    const [c1] = await contactIds(g1);
    const [c2] = await contactIds(g2);
    const mark = (id: string, status: string) =>
      app.gql(`mutation($id: UUID!) { updateContact(id: $id, input: { status: ${status} }) { status } }`, { id }, token);
    expect((await mark(c1!, 'do_not_call')).data.updateContact.status).toBe('do_not_call');
    expect((await app.prisma.contact.findUniqueOrThrow({ where: { id: c2 } })).status).toBe('do_not_call');
    expect(await app.prisma.doNotCallEntry.count({ where: { phoneNumber: '+14155550130' } })).toBe(1);
    expect((await mark(c2!, 'active')).data.updateContact.status).toBe('active');
    expect((await app.prisma.contact.findUniqueOrThrow({ where: { id: c1 } })).status).toBe('active');
    expect(await app.prisma.doNotCallEntry.count({ where: { phoneNumber: '+14155550130' } })).toBe(0);
  });

  it('new imports see the list', async () => {
    const owner = randomUUID();
    const token = await app.token(owner);
    await app.gql('mutation { addDoNotCall(input: { phoneNumber: "+14155550140" }) { id } }', {}, token);
    const res = await app.request('POST', '/api/v1/contacts/import/', {
      token,
      body: { groupName: 'x', csvData: [{ Phone: '415-555-0140' }] },
    });
    expect(res.json.totalDoNotCall).toBe(1);
    expect(insertCampaign).toBeDefined();
  });
});

describe('a large import', () => {
  it('merges a duplicate that arrives after its first row was already written', async () => {
    const token = await app.token();
    const rows: Record<string, string>[] = Array.from({ length: 6000 }, (_, i) => ({
      Name: `Person ${i}`,
      Phone: `+1415${String(2000000 + i)}`,
    }));
    rows.push({ Name: 'Person Zero again', Phone: '(415) 200-0000', Company: 'Late Co' });
    const res = await app.request('POST', '/api/v1/contacts/import/', { token, body: { groupName: 'big', csvData: rows } });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ totalImported: 6000, totalDuplicates: 1 });
    const first = await app.prisma.contact.findFirstOrThrow({ where: { groupId: res.json.groupId, phoneNumber: '+14152000000' } });
    expect(first.name).toBe('Person 0');
    expect(first.data).toMatchObject({ first_name: 'Person', last_name: '0', custom_fields: { Company: 'Late Co' } });
    expect(await total(res.json.groupId)).toBe(6000);
  });
});
