import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IsoInstants } from '../src/db/json-rows.js';
import { toV1Agent } from '../src/rest/serializers/agents.js';
import { toV1Campaign } from '../src/rest/serializers/campaigns.js';
import { agentHidden, agentRelations, listAgentsWithRelations } from '../src/services/agents/with-relations.js';
import { listAgents } from '../src/services/agents/agents.js';
import { getCampaign, listCampaigns } from '../src/services/campaigns/campaigns.js';
import {
  campaignRelations,
  getCampaignAsV1Json,
  getCampaignWithRelations,
  listCampaignsAsV1Json,
  type CampaignWithRelations,
} from '../src/services/campaigns/with-relations.js';
import { serviceContext } from '../src/services/context.js';
import { NotFoundError } from '../src/services/errors.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, forceStatus, importGroup, contactRows, type Customer } from './support/campaigns.js';
import { dialerEnv } from './support/dialer.js';
import { createAgent, nextPhoneNumber, templateId } from './support/fixtures.js';

// The v1 lists read campaigns and agents with their relations in plain SQL, each row built as JSON with
// its instants as ISO 8601 text (and a campaign's schedule columns as their JSON text); Prisma reads the
// same relations through its own include. The two must
// give the same objects, field for field, or the v1 shapes would drift from everything else that reads
// through Prisma; and the v1 bytes must be those the serializers made of Prisma's read.

let app: TestApp;
let alice: Customer;
let bob: Customer;
const ctxOf = (who: Customer) => serviceContext(dialerEnv(app, { now: () => new Date() }), { id: who.id, isAdmin: false });
/** Prisma's read as the SQL read gives it: a Date in JSON is its ISO 8601 text. */
const isoInstants = <T>(value: T) => JSON.parse(JSON.stringify(value)) as IsoInstants<T>;
/** The SQL read of a campaign with its schedule columns parsed from their JSON text, as Prisma reads them. */
const scheduleParsed = (c: CampaignWithRelations | undefined) =>
  c && {
    ...c,
    callingHours: JSON.parse(c.callingHours),
    scheduleConfig: JSON.parse(c.scheduleConfig),
    activeDays: JSON.parse(c.activeDays),
  };
/** Prisma's read of a campaign as the SQL read gives it, for the serializer. */
const asRead = <C extends { callingHours: unknown; scheduleConfig: unknown; activeDays: unknown }>(c: C) => {
  const read = isoInstants(c);
  const text = (value: unknown) => JSON.stringify(value);
  return { ...read, callingHours: text(read.callingHours), scheduleConfig: text(read.scheduleConfig), activeDays: text(read.activeDays) };
};

beforeAll(async () => {
  app = await startTestApp();
  alice = await customer(app, { contacts: 3 });
  bob = await customer(app, { contacts: 1 });
  // Alice: a second agent with two more numbers (one primary), an archived agent, an agent of another
  // template with no number and no campaign, groups with headers (one archived, one with an erased contact), campaigns in
  // several states with their optional fields null or set, some created in the same millisecond.
  const second = await createAgent(app, alice.token, { name: 'Night desk' });
  await app.prisma.phoneNumber.createMany({
    data: [
      { userId: alice.id, agentId: second.id, number: nextPhoneNumber(), label: 'backup' },
      { userId: alice.id, agentId: second.id, number: nextPhoneNumber(), label: '' },
    ],
  });
  const archived = await createAgent(app, alice.token, { name: 'Retired' });
  const otherGroup = await importGroup(app, alice.token, [{ ...contactRows(1)[0]!, Company: 'Acme' }], 'VIPs');
  const first = await createCampaign(app, alice, {
    name: 'Spring',
    calling_hours: { start: '08:30', end: '18:00' },
    active_days: ['mon', 'sat'],
  });
  const summer = await createCampaign(app, alice, {
    name: 'Summer',
    agent_id: second.id,
    contact_group_id: otherGroup,
    description: 'With a description',
  });
  // Schedule columns as an older row may hold them: readers fill in the defaults of what is missing or bad.
  await app.prisma.campaign.update({
    where: { id: summer.id },
    data: { scheduleConfig: { max_attempts: 1 }, callingHours: { start: '25:00', end: '17:00' } },
  });
  const third = await createCampaign(app, alice, { name: 'Autumn', agent_id: archived.id });
  await forceStatus(app, first.id, 'paused', { startedAt: new Date('2026-11-01T10:00:00Z'), pausedReason: 'user_requested' });
  await app.prisma.campaign.update({ where: { id: third.id }, data: { createdAt: new Date('2026-01-01T00:00:00Z') } });
  await app.request('DELETE', `/api/v1/agents/${archived.id}/`, { token: alice.token });
  const lineless = await createAgent(app, alice.token, { name: 'No line' });
  await app.prisma.agent.update({
    where: { id: lineless.id },
    data: { phoneNumberId: null, llmWebsocketUrl: 'wss://llm.example/ws', templateId: await templateId(app, 'lead_qualifier') },
  });
  await app.prisma.phoneNumber.deleteMany({ where: { agentId: lineless.id } });
  const done = await createCampaign(app, alice, { name: 'Winter', contact_group_id: otherGroup });
  await app.prisma.campaign.update({
    where: { id: done.id },
    data: { status: 'completed', startedAt: new Date('2026-10-01T09:00:00.001Z'), completedAt: new Date('2026-10-02T17:30:00Z') },
  });
  await app.prisma.contactGroup.update({ where: { id: otherGroup }, data: { archivedAt: new Date() } });
  // A contact that was called is erased in place when deleted: its group counts one fewer.
  const [called] = await app.prisma.contact.findMany({ where: { groupId: alice.groupId }, take: 1 });
  await app.prisma.callAttempt.create({
    data: { userId: alice.id, campaignId: first.id, contactId: called!.id, attemptNumber: 1, status: 'completed' },
  });
  expect((await app.request('DELETE', `/api/v1/contacts/contacts/${called!.id}/`, { token: alice.token })).status).toBe(204);
  expect(await app.prisma.contact.findUniqueOrThrow({ where: { id: called!.id } })).toMatchObject({ erasedAt: expect.any(Date) });
  await createCampaign(app, bob);
}, 60_000);
afterAll(() => app.close());

describe('campaigns with their agent and group', () => {
  it('list as v1 text: the serializer’s bytes over Prisma’s read with the same relations, page by page', async () => {
    const ctx = ctxOf(alice);
    const viaPrisma = await listCampaigns(ctx, {}, { include: campaignRelations });
    expect(viaPrisma).toHaveLength(4);
    const v1Text = (campaigns: typeof viaPrisma) => JSON.stringify(campaigns.map((c) => toV1Campaign(asRead(c))));
    expect(await listCampaignsAsV1Json(ctx)).toBe(v1Text(viaPrisma));
    expect(await listCampaignsAsV1Json(ctx, { take: 1, skip: 1 })).toBe(
      v1Text(await listCampaigns(ctx, {}, { include: campaignRelations, take: 1, skip: 1 })),
    );
    expect(await listCampaignsAsV1Json(ctx, { take: 5, skip: 4 })).toBe('[]');
    for (const c of viaPrisma) expect(await getCampaignAsV1Json(ctx, c.id)).toBe(JSON.stringify(toV1Campaign(asRead(c))));
  });

  it('read one as Prisma reads it, and another user’s not at all', async () => {
    const ctx = ctxOf(alice);
    for (const { id } of await listCampaigns(ctx, {})) {
      expect(scheduleParsed(await getCampaignWithRelations(ctx, id))).toEqual(
        isoInstants(await getCampaign(ctx, id, { include: campaignRelations })),
      );
    }
    const [bobs] = await listCampaigns(ctxOf(bob), {});
    await expect(getCampaignWithRelations(ctx, bobs!.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(getCampaignWithRelations(ctx, randomUUID())).rejects.toBeInstanceOf(NotFoundError);
    await expect(getCampaignWithRelations(ctx, 'not-a-uuid')).rejects.toBeInstanceOf(NotFoundError);
    await expect(getCampaignAsV1Json(ctx, bobs!.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(getCampaignAsV1Json(ctx, 'not-a-uuid')).rejects.toBeInstanceOf(NotFoundError);
    expect(JSON.parse(await listCampaignsAsV1Json(ctxOf(bob))).map((c: { id: string }) => c.id)).toEqual([bobs!.id]);
  });
});

describe('agents with their template, numbers and campaigns', () => {
  it('list as Prisma lists them with the same relations, by status and all', async () => {
    const ctx = ctxOf(alice);
    for (const status of ['active', 'archived', null] as const) {
      const viaPrisma = await listAgents(ctx, status, { include: agentRelations, omit: agentHidden });
      expect(viaPrisma.length).toBeGreaterThan(0);
      expect(await listAgentsWithRelations(ctx, status)).toEqual(isoInstants(viaPrisma));
    }
    expect((await listAgentsWithRelations(ctxOf(bob), null)).map((a) => a.id)).toEqual([bob.agent.id]);
  });
});

describe('the v1 lists’ bytes', () => {
  it('GET /campaigns/: the serializer over Prisma’s read, each item as the detail endpoint answers it, the caller’s only', async () => {
    const list = await app.request('GET', '/api/v1/campaigns/', { token: alice.token });
    expect(list.status).toBe(200);
    const viaPrisma = await listCampaigns(ctxOf(alice), {}, { include: campaignRelations });
    expect(list.text).toBe(JSON.stringify(viaPrisma.map((c) => toV1Campaign(asRead(c)))));
    const details = [];
    for (const { id } of viaPrisma) details.push((await app.request('GET', `/api/v1/campaigns/${id}/`, { token: alice.token })).text);
    expect(list.text).toBe(`[${details.join(',')}]`);
    // Nulls and an archived agent and group are shown as they are.
    expect(list.json.map((c: any) => [c.name, c.started_at, c.paused_reason, c.user_agents.is_active])).toContainEqual([
      'Summer',
      null,
      null,
      true,
    ]);
    expect(list.json.find((c: any) => c.name === 'Autumn').user_agents).toMatchObject({ status: 'archived', is_active: false });
    expect(list.json.find((c: any) => c.name === 'Summer')).toMatchObject({
      calling_hours: { start: '09:00', end: '17:00' },
      schedule_config: { max_attempts: 1, max_attempts_per_day: 1, retry_interval_minutes: 60 },
    });
    expect(list.json.find((c: any) => c.name === 'Winter')).toMatchObject({
      started_at: '2026-10-01T09:00:00.001Z',
      completed_at: '2026-10-02T17:30:00.000Z',
      contact_groups: { name: 'VIPs' },
    });

    const bobs = await app.request('GET', '/api/v1/campaigns/', { token: bob.token });
    expect(bobs.json.map((c: any) => c.id)).toEqual((await listCampaigns(ctxOf(bob), {})).map((c) => c.id));
    for (const { id } of viaPrisma) expect((await app.request('GET', `/api/v1/campaigns/${id}/`, { token: bob.token })).status).toBe(404);
  });

  it('GET /agents/active/: the serializer over Prisma’s read, the caller’s only', async () => {
    const list = await app.request('GET', '/api/v1/agents/active/', { token: alice.token });
    expect(list.status).toBe(200);
    const viaPrisma = await listAgents(ctxOf(alice), 'active', { include: agentRelations, omit: agentHidden });
    expect(list.text).toBe(JSON.stringify(viaPrisma.map((a) => toV1Agent(isoInstants(a)))));
    expect(list.json.find((a: any) => a.name === 'No line')).toMatchObject({
      phone_numbers: [],
      campaigns: [],
      phone_number_id: null,
      llm_websocket_url: 'wss://llm.example/ws',
      agent_templates: { template_key: 'lead_qualifier' },
    });
    expect(list.json.map((a: any) => a.name)).not.toContain('Retired');

    const bobs = await app.request('GET', '/api/v1/agents/active/', { token: bob.token });
    expect(bobs.json.map((a: any) => a.id)).toEqual([bob.agent.id]);
  });
});

describe('the v1 campaign text, whatever the columns hold', () => {
  it('every stored schedule (defaults, partial, reordered, bad, JSON null) and open JSON prints the serializer’s bytes', async () => {
    const carol = await customer(app, { contacts: 1 });
    // Stored JSON as raw SQL writes it: numbers JSON.stringify would print otherwise (1.0, 1e21, -0), keys
    // whose order JavaScript changes, escapes, and the character that marks the pieces node prints.
    const open = {
      field_mappings: '{"b": 1.0, "10": 2, "a": 1e21, "9": [1.50, -0, 0.1, 1e-7, 12345678901234567890]}',
      selected_contact_fields: '["first_name", "\\u0001j{}", "line\\nbreak"]',
      call_insights: '{"quote": "\\"</script>", "emoji": "😀", "sep": "\\u2028", "nested": {"z": null, "y": true}}',
      post_call_analyzers: '[{"name": "sentiment", "max": 10.250}, {}]',
    };
    const schedules: { calling_hours?: string; schedule_config?: string; active_days?: string }[] = [
      {}, // the columns' defaults: schedule_config is '{}'
      { schedule_config: '{"max_attempts": 1}' },
      {
        schedule_config: '{"max_attempts": 5, "max_attempts_per_day": 4, "retry_interval_minutes": 30, "retry_on": ["voicemail", "busy"]}',
      },
      {
        schedule_config:
          '{"retry_on": [], "voicemail": {"action": "leave_message", "message": "Hi {{first_name}}"}, "retry_budgets": {"busy": {"max_retries": 2}, "no_answer": {"retry_after_minutes": 15}}}',
      },
      { schedule_config: '{"voicemail": {}}' },
      { schedule_config: '{"max_attempts": 99}', calling_hours: '{"start": "25:00", "end": "17:00"}', active_days: '[]' },
      { schedule_config: 'null', calling_hours: 'null', active_days: 'null' },
      { schedule_config: '"text"', calling_hours: '{"start": "10:00"}', active_days: '["sun", "Monday", 3, "3", "mon"]' },
      { calling_hours: '{"end": "24:00", "start": "00:00", "extra": 1}', active_days: '["sat"]' },
    ];
    for (const [i, schedule] of schedules.entries()) {
      const { id } = await createCampaign(app, carol, { name: `Schedule ${i} \u0001 "tab\there" \\ ünï 😀`, description: 'a\u2028b' });
      const columns = Object.entries({ ...schedule, ...(i % 2 ? open : {}) });
      if (!columns.length) {
        await app.prisma.$executeRawUnsafe(
          `UPDATE campaigns SET calling_hours = DEFAULT, schedule_config = DEFAULT, active_days = DEFAULT WHERE id = $1::uuid`,
          id,
        );
        continue;
      }
      const sets = columns.map(([column], n) => `${column} = $${n + 2}::jsonb`).join(', ');
      await app.prisma.$executeRawUnsafe(`UPDATE campaigns SET ${sets} WHERE id = $1::uuid`, id, ...columns.map(([, json]) => json));
    }
    await app.prisma.$executeRawUnsafe(
      `UPDATE contact_groups SET csv_headers = $2::jsonb WHERE id = $1::uuid`,
      carol.groupId,
      '["Phone", "Ünï \\u0001", ""]',
    );

    const ctx = ctxOf(carol);
    const viaPrisma = await listCampaigns(ctx, {}, { include: campaignRelations });
    expect(viaPrisma).toHaveLength(schedules.length);
    const expected = JSON.stringify(viaPrisma.map((c) => toV1Campaign(asRead(c))));
    const list = await app.request('GET', '/api/v1/campaigns/', { token: carol.token });
    expect(list.text).toBe(expected);
    expect(await listCampaignsAsV1Json(ctx)).toBe(expected);
    for (const c of viaPrisma) {
      const one = await app.request('GET', `/api/v1/campaigns/${c.id}/`, { token: carol.token });
      expect(one.text).toBe(JSON.stringify(toV1Campaign(asRead(c))));
    }
    // What the readers made of them, to show the cases differ.
    const configs = list.json.map((c: any) => c.schedule_config);
    expect(configs).toContainEqual({
      max_attempts: 3,
      max_attempts_per_day: 2,
      retry_interval_minutes: 60,
      retry_on: ['no_answer', 'busy', 'failed', 'voicemail'],
    });
    expect(configs).toContainEqual({
      max_attempts: 1,
      max_attempts_per_day: 1,
      retry_interval_minutes: 60,
      retry_on: ['no_answer', 'busy', 'failed', 'voicemail'],
    });
    expect(configs).toContainEqual({
      max_attempts: 5,
      max_attempts_per_day: 4,
      retry_interval_minutes: 30,
      retry_on: ['busy', 'voicemail'],
    });
    expect(list.json.map((c: any) => c.active_days)).toContainEqual(['mon', 'wed', 'sun']);
    expect(list.json.map((c: any) => c.field_mappings)).toContainEqual({
      9: [1.5, 0, 0.1, 1e-7, 12345678901234567000],
      10: 2,
      b: 1,
      a: 1e21,
    });
  });
});
