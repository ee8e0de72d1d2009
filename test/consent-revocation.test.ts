import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollContacts } from '../src/services/campaigns/store.js';
import { recordConsent, revokeConsent } from '../src/services/contacts/consents.js';
import { importContacts } from '../src/services/contacts/import.js';
import type { ServiceEnv } from '../src/services/context.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';

/** These tests run the dialer on the database: room for a busy machine, not a bound on speed. */
const SLOW = 90_000;

// Consent revoked by any reasonable means (FCC 24-24): through the API, an import's consent column, or
// the do-not-call list (the in-call tool, an opt-out reported by webhook). It stops every call of its
// scope from the next claim on, in every campaign of the customer and for every contact with the number;
// the campaign report shows the longest time between a revocation and a call placed after it. From
// 2027-01-31 a revocation of any kind stops every call to the person (the revoke-all rule).

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const ONCE = { scheduleConfig: { max_attempts: 1, retry_on: [] } };

/** Another running campaign of the same customer, on a group of its own with these numbers. */
async function anotherCampaign(
  env: ServiceEnv,
  setup: Awaited<ReturnType<typeof runningCampaign>>,
  rows: Record<string, string>[],
  over: Record<string, unknown> = {},
) {
  const imported = await importContacts(setup.ctx, { group_name: `Also ${randomUUID()}`, csv_data: rows });
  const campaign = await app.prisma.campaign.create({
    data: {
      userId: setup.userId,
      agentId: setup.agent.id,
      contactGroupId: imported.groupId,
      name: 'Another',
      status: 'running',
      startedAt: env.clock.now(),
      callingHours: { start: '00:00', end: '24:00' },
      activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
      regionalRules: false,
      ...ONCE,
      ...over,
    },
  });
  await enrollContacts(app.sql, campaign.id, env.clock.now());
  return campaign.id;
}

const contactOf = (userId: string, phoneNumber: string) => app.prisma.contact.findFirstOrThrow({ where: { userId, phoneNumber } });

const lagOf = async (campaignId: string, token: string) => {
  const { data, errors } = await app.gql(
    `query ($id: UUID!) { campaign(id: $id) { report { longestRevocationLagSeconds } } }`,
    { id: campaignId },
    token,
  );
  expect(errors).toBeUndefined();
  return data.campaign.report.longestRevocationLagSeconds as number;
};

describe('a revoked consent', () => {
  it(
    'stops calls to the person in every campaign at once, and the report shows no call after it',
    async () => {
      // The API revokes on the app's clock: the dialer's starts at the same moment.
      const clock = new ManualClock(new Date());
      const env = dialerEnv(app, clock);
      const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
      const [revoking, keeping] = ['+12125550601', '+12125550602'];
      const setup = await runningCampaign(app, env, {
        rows: [{ Phone: revoking }, { Phone: keeping }],
        campaign: { ...ONCE, requiredConsent: ['calls'] },
      });
      const consents = new Map<string, string>();
      for (const phone of [revoking, keeping]) {
        const contact = await contactOf(setup.userId, phone);
        const given = { contact_id: contact.id, kind: 'calls', source: 'Web form', obtained_at: '2026-10-01T00:00:00Z' };
        consents.set(phone, (await recordConsent(setup.ctx, given)).id);
      }
      // A campaign that requires no consent, on another list with the same person.
      const other = await anotherCampaign(env, setup, [{ Phone: revoking }]);

      const { data } = await app.gql(
        `mutation ($id: UUID!) { revokeConsent(id: $id) { revokedAt } }`,
        { id: consents.get(revoking) },
        setup.token,
      );
      expect(Date.parse(data.revokeConsent.revokedAt)).toBeGreaterThanOrEqual(clock.now().getTime());
      await dialer.run(setup.campaignId);
      await dialer.run(other);
      expect(dialer.telephony.placed.map((c) => c.to)).toEqual([keeping]);
      const blocks = await app.prisma.dialBlock.findMany({ where: { userId: setup.userId }, orderBy: { campaignId: 'asc' } });
      expect(blocks.map((b) => [b.campaignId, b.reason, b.detail]).sort()).toEqual(
        [
          [setup.campaignId, 'consent_revoked', 'calls'],
          [other, 'consent_revoked', 'calls'],
        ].sort(),
      );
      expect(await lagOf(setup.campaignId, setup.token)).toBe(0);
      expect(await lagOf(other, setup.token)).toBe(0);

      // The figure measures: a revocation recorded as made a minute before a call that was placed shows it.
      await app.prisma.contactConsent.update({
        where: { id: consents.get(keeping)! },
        data: { revokedAt: new Date(clock.now().getTime() - 60_000) },
      });
      expect(await lagOf(setup.campaignId, setup.token)).toBe(60);
      // Another customer's campaign is not found.
      const stranger = await app.token(randomUUID());
      const theirs = await app.gql(
        `query ($id: UUID!) { campaign(id: $id) { report { longestRevocationLagSeconds } } }`,
        { id: setup.campaignId },
        stranger,
      );
      expect(theirs.data?.campaign ?? null).toBeNull();
    },
    SLOW,
  );

  it(
    'is recorded by an import’s consent column, and stops the number in the customer’s other lists',
    async () => {
      const clock = new ManualClock(new Date('2026-11-03T16:00:00Z'));
      const env = dialerEnv(app, clock);
      const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
      const [person, another] = ['+12125550611', '+12125550612'];
      const setup = await runningCampaign(app, env, { rows: [{ Phone: person }, { Phone: another }], campaign: ONCE });
      await importContacts(setup.ctx, { group_name: 'CRM export', csv_data: [{ Phone: person, 'Consent Calls': 'Revoked' }] });
      const imported = await app.prisma.contactConsent.findMany({ where: { userId: setup.userId } });
      expect(imported.map((c) => [c.kind, c.source, c.revokedAt !== null])).toEqual([['calls', 'import', true]]);

      await dialer.run(setup.campaignId);
      expect(dialer.telephony.placed.map((c) => c.to)).toEqual([another]);
      const block = await app.prisma.dialBlock.findFirstOrThrow({ where: { campaignId: setup.campaignId } });
      expect([block.reason, block.detail]).toEqual(['consent_revoked', 'calls']);
    },
    SLOW,
  );

  it(
    'of one kind stops only the campaigns requiring it before 2027-01-31, and every call from then on',
    async () => {
      const clock = new ManualClock(new Date('2027-01-30T12:00:00Z'));
      const env = dialerEnv(app, clock);
      const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
      const [before, after] = ['+12125550621', '+12125550622'];
      const setup = await runningCampaign(app, env, { rows: [{ Phone: before }, { Phone: after }], campaign: ONCE });
      const recordings = new Map<string, string>();
      for (const phone of [before, after]) {
        const contact = await contactOf(setup.userId, phone);
        const given = { contact_id: contact.id, kind: 'recording', source: 'IVR', obtained_at: '2026-10-01T00:00:00Z' };
        recordings.set(phone, (await recordConsent(setup.ctx, given)).id);
      }
      // A campaign that records its calls needs the recording consent: a revocation on either side stops it.
      const recorded = await anotherCampaign(env, setup, [{ Phone: before }], { requiredConsent: ['recording'] });
      await revokeConsent(setup.ctx, recordings.get(before)!);
      clock.set('2027-01-31T12:00:00Z');
      await revokeConsent(setup.ctx, recordings.get(after)!);

      clock.set('2027-02-01T16:00:00Z');
      await dialer.run(setup.campaignId);
      await dialer.run(recorded);
      // Revoked the day before: this campaign does not record, so its call goes ahead. Revoked on the day:
      // it covers every call.
      expect(dialer.telephony.placed.map((c) => c.to)).toEqual([before]);
      const blocks = await app.prisma.dialBlock.findMany({ where: { userId: setup.userId } });
      const byContact = new Map((await app.prisma.contact.findMany({ where: { userId: setup.userId } })).map((c) => [c.id, c.phoneNumber]));
      expect(
        blocks.map((b) => [b.campaignId === recorded ? 'recorded' : 'plain', byContact.get(b.contactId), b.reason, b.detail]).sort(),
      ).toEqual(
        [
          ['plain', after, 'consent_revoked', 'recording'],
          ['recorded', before, 'consent_revoked', 'recording'],
        ].sort(),
      );
    },
    SLOW,
  );
});
