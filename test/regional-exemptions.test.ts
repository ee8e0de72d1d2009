import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, exemptFromRegionalRules } from './support/campaigns.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';

/** These tests run the dialer on the database: room for a busy machine, not a bound on speed. */
const SLOW = 90_000;

// No silent off switch: a campaign turns the regional rules off (regional_rules: false) only under an
// exemption an admin granted its customer, with who, why and until when. Every call placed with the rules
// off names the exemption; once it expires the rules apply again, from the next claim.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const GRANT = `mutation ($input: GrantRegionalRuleExemptionInput!) {
  grantRegionalRuleExemption(input: $input) { id userId grantedBy reason expiresAt } }`;
const LIST = `query ($userId: UUID) { regionalRuleExemptions(userId: $userId) { id grantedBy reason expiresAt } }`;
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

describe('exemptions from the regional rules', () => {
  it(
    'are granted by admins only, with who, why and until when, and read by the admin and their customer',
    async () => {
      const who = await customer(app);
      const adminId = randomUUID();
      const admin = await app.token(adminId, 'admin');
      const input = { userId: who.id, reason: 'Appointment reminders the callees asked for', expiresAt: inDays(30) };

      expect((await app.gql(GRANT, { input }, who.token)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      const refusals = [
        [{ ...input, expiresAt: inDays(-1) }, 'expiresAt'],
        [{ ...input, expiresAt: inDays(400) }, 'expiresAt'],
        [{ ...input, reason: '  ' }, 'reason'],
        [{ ...input, userId: randomUUID() }, 'userId'],
      ] as const;
      for (const [bad, field] of refusals) {
        const { errors } = await app.gql(GRANT, { input: bad }, admin);
        expect(errors?.[0]?.extensions, field).toMatchObject({ code: 'BAD_USER_INPUT', fieldErrors: { [field]: [expect.any(String)] } });
      }

      const { data } = await app.gql(GRANT, { input }, admin);
      expect(data.grantRegionalRuleExemption).toMatchObject({
        userId: who.id,
        grantedBy: adminId,
        reason: input.reason,
        expiresAt: input.expiresAt,
      });
      const granted = { id: data.grantRegionalRuleExemption.id, grantedBy: adminId, reason: input.reason, expiresAt: input.expiresAt };
      expect((await app.gql(LIST, {}, who.token)).data.regionalRuleExemptions).toEqual([granted]);
      expect((await app.gql(LIST, { userId: who.id }, admin)).data.regionalRuleExemptions).toEqual([granted]);
      // Another customer sees none of them, and may not ask for them.
      const other = await customer(app, { credits: 0 });
      expect((await app.gql(LIST, {}, other.token)).data.regionalRuleExemptions).toEqual([]);
      expect((await app.gql(LIST, { userId: who.id }, other.token)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    },
    SLOW,
  );

  it(
    'are needed to turn the rules off, on v1 and GraphQL, when a campaign is created or edited',
    async () => {
      const who = await customer(app);
      const body = { name: 'Reminders', agent_id: who.agent.id, contact_group_id: who.groupId, regional_rules: false };
      const refused = await app.request('POST', '/api/v1/contacts/contacts/', { token: who.token, body });
      expect(refused.status).toBe(400);
      expect(refused.json).toEqual({ regional_rules: [expect.stringContaining('exemption granted by an admin')] });

      const created = await createCampaign(app, who, { name: 'Rules on' });
      const update = await app.gql(
        `mutation ($id: UUID!) { updateCampaign(id: $id, input: { regionalRules: false }) { regionalRules } }`,
        { id: created.id },
        who.token,
      );
      expect(update.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        fieldErrors: { regionalRules: [expect.any(String)] },
      });
      const create = await app.gql(
        `mutation ($input: CreateCampaignInput!) { createCampaign(input: $input) { regionalRules } }`,
        { input: { name: 'Off', agentId: who.agent.id, contactGroupId: who.groupId, regionalRules: false } },
        who.token,
      );
      expect(create.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        fieldErrors: { regionalRules: [expect.any(String)] },
      });
      expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id: created.id } })).regionalRules).toBe(true);

      await exemptFromRegionalRules(app, who.id);
      expect((await app.request('POST', '/api/v1/contacts/contacts/', { token: who.token, body })).status).toBe(201);
      const edited = await app.gql(
        `mutation ($id: UUID!) { updateCampaign(id: $id, input: { regionalRules: false }) { regionalRules } }`,
        { id: created.id },
        who.token,
      );
      expect(edited.data.updateCampaign.regionalRules).toBe(false);
    },
    SLOW,
  );

  it(
    'name every call they let through, and stop applying when they expire: the rules are back at once',
    async () => {
      // 22:00 in Miami, after Florida's calling hours; the exemption ends at 23:00 there.
      const clock = new ManualClock(new Date('2026-11-04T03:00:00Z'));
      const env = dialerEnv(app, clock);
      const dialer = recordingDialer(env, () => ({ outcome: 'no_answer', durationSeconds: 0 }));
      const phones = ['+13055550701', '+13055550702'];
      const setup = await runningCampaign(app, env, {
        rows: phones.map((Phone) => ({ Phone })),
        campaign: { scheduleConfig: { max_attempts: 3, max_attempts_per_day: 3, retry_interval_minutes: 60, retry_on: ['no_answer'] } },
      });
      await app.prisma.regionalRuleExemption.update({
        where: { id: setup.exemptionId },
        data: { expiresAt: new Date('2026-11-04T04:00:00Z') },
      });

      await dialer.run(setup.campaignId);
      expect(dialer.telephony.placed.map((c) => c.to).sort()).toEqual(phones);
      const { data } = await app.gql(
        `query ($id: UUID!) { campaign(id: $id) { attempts(first: 10) { edges { node { toNumber regionalRuleExemption { id grantedBy reason } } } } } }`,
        { id: setup.campaignId },
        setup.token,
      );
      const exemption = await app.prisma.regionalRuleExemption.findUniqueOrThrow({ where: { id: setup.exemptionId } });
      for (const { node } of data.campaign.attempts.edges) {
        expect(node.regionalRuleExemption).toEqual({ id: exemption.id, grantedBy: exemption.grantedBy, reason: exemption.reason });
      }

      // The retries are due at 04:00, as the exemption ends: the regional rules hold them until 08:00 in Miami.
      clock.set('2026-11-04T04:00:00Z');
      await dialer.run(setup.campaignId);
      expect(dialer.telephony.placed).toHaveLength(2);
      const blocks = await app.prisma.dialBlock.findMany({ where: { campaignId: setup.campaignId } });
      expect(blocks.map((b) => [b.reason, b.detail, b.until?.toISOString()])).toEqual([
        ['regional_hours', 'US-FL', '2026-11-04T13:00:00.000Z'],
        ['regional_hours', 'US-FL', '2026-11-04T13:00:00.000Z'],
      ]);
      clock.set('2026-11-04T13:00:00Z');
      await dialer.run(setup.campaignId);
      const retries = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId, attemptNumber: 2 } });
      expect(retries.map((a) => a.regionalRuleExemptionId)).toEqual([null, null]);
    },
    SLOW,
  );
});
