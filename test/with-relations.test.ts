import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRelations, listAgentsWithRelations } from '../src/services/agents/with-relations.js';
import { listAgents } from '../src/services/agents/agents.js';
import { getCampaign, listCampaigns } from '../src/services/campaigns/campaigns.js';
import { campaignRelations, getCampaignWithRelations, listCampaignsWithRelations } from '../src/services/campaigns/with-relations.js';
import { serviceContext } from '../src/services/context.js';
import { NotFoundError } from '../src/services/errors.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, forceStatus, importGroup, contactRows, type Customer } from './support/campaigns.js';
import { dialerEnv } from './support/dialer.js';
import { createAgent, nextPhoneNumber } from './support/fixtures.js';

// The v1 lists read campaigns and agents with their relations in plain SQL; Prisma reads the same
// relations through its own include. The two must give the same objects, field for field and in the
// same order, or the v1 shapes would drift from everything else that reads through Prisma.

let app: TestApp;
let alice: Customer;
let bob: Customer;
const ctxOf = (who: Customer) => serviceContext(dialerEnv(app, { now: () => new Date() }), { id: who.id, isAdmin: false });

beforeAll(async () => {
  app = await startTestApp();
  alice = await customer(app, { contacts: 3 });
  bob = await customer(app, { contacts: 1 });
  // Alice: a second agent with two more numbers (one primary), an archived agent, groups with headers,
  // campaigns in several states, some created in the same millisecond.
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
  await createCampaign(app, alice, {
    name: 'Summer',
    agent_id: second.id,
    contact_group_id: otherGroup,
    description: 'With a description',
  });
  const third = await createCampaign(app, alice, { name: 'Autumn', agent_id: archived.id });
  await forceStatus(app, first.id, 'paused', { startedAt: new Date('2026-11-01T10:00:00Z'), pausedReason: 'user_requested' });
  await app.prisma.campaign.update({ where: { id: third.id }, data: { createdAt: new Date('2026-01-01T00:00:00Z') } });
  await app.request('DELETE', `/api/v1/agents/${archived.id}/`, { token: alice.token });
  await createCampaign(app, bob);
}, 60_000);
afterAll(() => app.close());

describe('campaigns with their agent and group', () => {
  it('list as Prisma lists them with the same relations', async () => {
    const ctx = ctxOf(alice);
    const viaPrisma = await listCampaigns(ctx, {}, { include: campaignRelations });
    expect(viaPrisma).toHaveLength(3);
    expect(await listCampaignsWithRelations(ctx)).toEqual(viaPrisma);
    expect(await listCampaignsWithRelations(ctx, { take: 1, skip: 1 })).toEqual(
      await listCampaigns(ctx, {}, { include: campaignRelations, take: 1, skip: 1 }),
    );
    expect(await listCampaignsWithRelations(ctx, { take: 5, skip: 3 })).toEqual([]);
  });

  it('read one as Prisma reads it, and another user’s not at all', async () => {
    const ctx = ctxOf(alice);
    for (const { id } of await listCampaigns(ctx, {})) {
      expect(await getCampaignWithRelations(ctx, id)).toEqual(await getCampaign(ctx, id, { include: campaignRelations }));
    }
    const [bobs] = await listCampaigns(ctxOf(bob), {});
    await expect(getCampaignWithRelations(ctx, bobs!.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(getCampaignWithRelations(ctx, randomUUID())).rejects.toBeInstanceOf(NotFoundError);
    await expect(getCampaignWithRelations(ctx, 'not-a-uuid')).rejects.toBeInstanceOf(NotFoundError);
    expect((await listCampaignsWithRelations(ctxOf(bob))).map((c) => c.id)).toEqual([bobs!.id]);
  });
});

describe('agents with their template, numbers and campaigns', () => {
  it('list as Prisma lists them with the same relations, by status and all', async () => {
    const ctx = ctxOf(alice);
    for (const status of ['active', 'archived', null] as const) {
      const viaPrisma = await listAgents(ctx, status, { include: agentRelations });
      expect(viaPrisma.length).toBeGreaterThan(0);
      expect(await listAgentsWithRelations(ctx, status)).toEqual(viaPrisma);
    }
    expect((await listAgentsWithRelations(ctxOf(bob), null)).map((a) => a.id)).toEqual([bob.agent.id]);
  });
});
