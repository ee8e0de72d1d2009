import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statement } from '../src/db/sql.js';
import rulesFile from '../src/services/calling-rules/data/calling-rules.json' with { type: 'json' };
import { capBlock, CAP_LOOKBACK_MS, CAPS_VERSION } from '../src/services/calling-rules/caps.js';
import { REVOCATION_VERSION, REVOKE_ALL_FROM } from '../src/services/calling-rules/revocation.js';
import { gate, type GateCampaign } from '../src/services/calling-rules/gate.js';
import { windowOf } from '../src/services/calling-rules/window.js';
import { enrollContacts } from '../src/services/campaigns/store.js';
import { importContacts } from '../src/services/contacts/import.js';
import type { ServiceEnv } from '../src/services/context.js';
import { lockCallHistories } from '../src/services/dialer/store/placing.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, manualDialer, RecordingTelephony, recordingDialer, runningCampaign } from './support/dialer.js';

/** These tests run the dialer on the database: room for a busy machine, not a bound on speed. */
const SLOW = 90_000;

// Frequency caps per person across all of a customer's campaigns (calling-rules/caps.ts, `frequencyCaps`
// in the rules data): Florida, Oklahoma and Maryland 3 calls in 24 hours, Maine 1 in 8 hours, France 4
// in 30 days and none for 60 days after a refusal. The cap counts every call placed to the number, by
// any campaign and any worker; a capped contact waits, and the block is recorded and reported.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const allWeek = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const rules = (over: Partial<GateCampaign> = {}): GateCampaign => ({
  timezone: 'UTC',
  window: windowOf({ start: '00:00', end: '24:00' }, allWeek),
  requiredConsent: [],
  regionalRules: true,
  ...over,
});
const ago = (now: Date, ms: number) => new Date(now.getTime() - ms);

describe('the caps, as rules', () => {
  const now = new Date('2026-11-03T15:00:00Z'); // 10:00 in Miami, a Tuesday

  it('hold a Floridian, Oklahoman or Marylander after three calls in 24 hours, until the oldest is a day old', () => {
    const placed = [ago(now, 23 * HOUR), ago(now, 2 * HOUR), ago(now, HOUR)];
    for (const region of ['US-FL', 'US-OK', 'US-MD']) {
      expect(capBlock(now, region, { placed, refusedAt: null })).toEqual({ region, until: new Date(now.getTime() + HOUR) });
      expect(capBlock(now, region, { placed: placed.slice(1), refusedAt: null })).toBeNull();
    }
    // A call exactly one day old no longer counts; New York has no cap.
    expect(capBlock(now, 'US-FL', { placed: [ago(now, DAY), ...placed.slice(1)], refusedAt: null })).toBeNull();
    expect(capBlock(now, 'US-NY', { placed, refusedAt: null })).toBeNull();
  });

  it('hold a Mainer for 8 hours after one call, and a French callee after four in 30 days or for 60 days after a refusal', () => {
    expect(capBlock(now, 'US-ME', { placed: [ago(now, 7 * HOUR)], refusedAt: null })).toEqual({
      region: 'US-ME',
      until: new Date(now.getTime() + HOUR),
    });
    expect(capBlock(now, 'US-ME', { placed: [ago(now, 8 * HOUR)], refusedAt: null })).toBeNull();
    const four = [29, 20, 10, 1].map((days) => ago(now, days * DAY));
    expect(capBlock(now, 'FR', { placed: four, refusedAt: null })).toEqual({ region: 'FR', until: new Date(now.getTime() + DAY) });
    expect(capBlock(now, 'FR', { placed: four.slice(1), refusedAt: null })).toBeNull();
    expect(capBlock(now, 'FR', { placed: [], refusedAt: ago(now, 59 * DAY) })).toEqual({
      region: 'FR',
      until: new Date(now.getTime() + DAY),
    });
    expect(capBlock(now, 'FR', { placed: [], refusedAt: ago(now, 60 * DAY) })).toBeNull();
    expect(CAP_LOOKBACK_MS).toBe(60 * DAY);
  });

  it('are data with a source each, documented with their version in docs/compliance-rules.md', () => {
    const docs = readFileSync(new URL('../docs/compliance-rules.md', import.meta.url), 'utf8');
    expect(docs).toContain(`frequency caps ${CAPS_VERSION}`);
    expect(docs).toContain(`consent revocation ${REVOCATION_VERSION}`);
    for (const rule of rulesFile.frequencyCaps.rules) {
      expect(rule.source, rule.region).toMatch(/https:\/\//);
      expect(docs).toContain(`| \`${rule.region}\` | ${rule.calls} |`);
    }
    expect(REVOKE_ALL_FROM.toISOString()).toBe('2027-01-31T00:00:00.000Z');
    expect(docs).toContain('From 2027-01-31 (revoke-all)');
  });

  it('make the gate wait until the cap and the regional hours both allow a call, and go with the regional rules', () => {
    // Three calls from 15:30 the day before: free at 15:30 UTC, 10:30 in Miami.
    const history = { placed: [ago(now, 23.5 * HOUR), ago(now, 2 * HOUR), ago(now, HOUR)], refusedAt: null };
    expect(gate(now, rules(), { phoneNumber: '+13055550100', timezone: null, region: null, consents: [], history })).toEqual({
      kind: 'later',
      until: new Date('2026-11-03T15:30:00Z'),
      reason: 'frequency_cap',
      detail: 'US-FL',
    });
    // Freed at 01:30 UTC, 20:30 in Miami: after Florida's hours, so 08:00 the next morning.
    const late = new Date('2026-11-04T00:30:00Z');
    const evening = { placed: [ago(late, 23 * HOUR), ago(late, 2 * HOUR), ago(late, HOUR)], refusedAt: null };
    expect(
      gate(late, rules(), { phoneNumber: '+13055550100', timezone: null, region: null, consents: [], history: evening }),
    ).toMatchObject({
      kind: 'later',
      until: new Date('2026-11-04T13:00:00Z'),
      reason: 'frequency_cap',
    });
    // A contact of the campaign who moved to Florida is capped as a Floridian; regional rules off, no cap.
    expect(gate(now, rules(), { phoneNumber: '+12125550100', timezone: null, region: 'US-FL', consents: [], history })).toMatchObject({
      reason: 'frequency_cap',
    });
    expect(
      gate(now, rules({ regionalRules: false }), { phoneNumber: '+13055550100', timezone: null, region: null, consents: [], history }),
    ).toEqual({
      kind: 'call',
    });
  });
});

const RULES_ON = {
  timezone: 'UTC',
  callingHours: { start: '00:00', end: '24:00' },
  activeDays: allWeek,
  regionalRules: true,
  scheduleConfig: { max_attempts: 1, retry_on: [] },
};

/** Another running campaign of the same customer, on a group of its own with these numbers. */
async function anotherCampaign(env: ServiceEnv, setup: Awaited<ReturnType<typeof runningCampaign>>, phones: string[]) {
  const imported = await importContacts(setup.ctx, { group_name: `Also ${randomUUID()}`, csv_data: phones.map((Phone) => ({ Phone })) });
  const campaign = await app.prisma.campaign.create({
    data: {
      userId: setup.userId,
      agentId: setup.agent.id,
      contactGroupId: imported.groupId,
      name: 'Another',
      status: 'running',
      startedAt: env.clock.now(),
      concurrentCalls: 10,
      ...RULES_ON,
    },
  });
  await enrollContacts(app.sql, campaign.id, env.clock.now());
  return campaign.id;
}

describe('the dialer under the caps', () => {
  it(
    'counts the calls of every campaign of the customer, holds the next one until the window frees, and reports the block',
    async () => {
      const clock = new ManualClock(new Date('2026-11-03T15:00:00Z'));
      const env = dialerEnv(app, clock);
      const dialer = recordingDialer(env, () => ({ outcome: 'no_answer', durationSeconds: 0 }));
      const florida = '+13055550311';
      const maine = '+12075550311';
      const setup = await runningCampaign(app, env, { rows: [{ Phone: florida }, { Phone: maine }], campaign: RULES_ON });
      const campaigns = [setup.campaignId];
      for (let i = 0; i < 3; i += 1) campaigns.push(await anotherCampaign(env, setup, [florida, maine]));

      for (const id of campaigns) {
        await dialer.run(id);
        clock.advance(60_000);
      }
      const calls = (to: string) => dialer.telephony.placed.filter((c) => c.to === to).map((c) => c.at.toISOString());
      expect(calls(florida)).toEqual(['2026-11-03T15:00:00.000Z', '2026-11-03T15:01:00.000Z', '2026-11-03T15:02:00.000Z']);
      expect(calls(maine)).toEqual(['2026-11-03T15:00:00.000Z']);

      const last = campaigns[3]!;
      const blocks = await app.prisma.dialBlock.findMany({ where: { campaignId: last }, orderBy: { detail: 'asc' } });
      expect(blocks.map((b) => [b.reason, b.detail, b.until?.toISOString()])).toEqual([
        ['frequency_cap', 'US-FL', '2026-11-04T15:00:00.000Z'],
        ['frequency_cap', 'US-ME', '2026-11-03T23:00:00.000Z'],
      ]);
      const waiting = await app.prisma.campaignContact.findMany({
        where: { campaignId: last },
        select: { state: true, nextAttemptAt: true },
      });
      expect(waiting.map((w) => [w.state, w.nextAttemptAt?.toISOString()]).sort()).toEqual([
        ['pending', '2026-11-03T23:00:00.000Z'],
        ['pending', '2026-11-04T15:00:00.000Z'],
      ]);

      const { data } = await app.gql(
        `query ($id: UUID!) { campaign(id: $id) { report { metrics { blocked { total frequencyCap } } } } }`,
        { id: last },
        setup.token,
      );
      expect(data.campaign.report.metrics.blocked).toEqual({ total: 2, frequencyCap: 2 });
      const v1 = await app.request('GET', `/api/v1/campaigns/${last}/report/`, { token: setup.token });
      expect(v1.json.metrics.blocked).toMatchObject({ total: 2, frequencyCap: 2 });

      // The first calls leave their windows: Maine's after 8 hours, Florida's after a day.
      clock.set('2026-11-03T23:00:00Z');
      await dialer.run(last);
      expect(calls(maine)).toHaveLength(2);
      expect(calls(florida)).toHaveLength(3);
      clock.set('2026-11-04T15:00:00Z');
      await dialer.run(last);
      expect(calls(florida)).toHaveLength(4);
    },
    SLOW,
  );

  it(
    'counts per subject where campaigns name one: the calls of that subject and of campaigns naming none',
    async () => {
      const clock = new ManualClock(new Date('2026-11-03T15:00:00Z'));
      const env = dialerEnv(app, clock);
      const dialer = recordingDialer(env, () => ({ outcome: 'no_answer', durationSeconds: 0 }));
      const florida = '+13055550411';
      const setup = await runningCampaign(app, env, { rows: [{ Phone: florida }], campaign: { ...RULES_ON, callSubject: 'renewals' } });
      const renewals = [setup.campaignId, await anotherCampaign(env, setup, [florida]), await anotherCampaign(env, setup, [florida])];
      for (const id of renewals.slice(1)) await app.prisma.campaign.update({ where: { id }, data: { callSubject: 'renewals' } });
      const survey = await anotherCampaign(env, setup, [florida]);
      await app.prisma.campaign.update({ where: { id: survey }, data: { callSubject: 'survey' } });
      const unnamed = await anotherCampaign(env, setup, [florida]);

      // Three calls about renewals: the survey is another subject, so it still has its own three.
      for (const id of [...renewals, survey]) {
        await dialer.run(id);
        clock.advance(60_000);
      }
      expect(dialer.telephony.placed.filter((c) => c.to === florida)).toHaveLength(4);
      // A campaign naming no subject counts every call of the customer: four already.
      await dialer.run(unnamed);
      expect(dialer.telephony.placed.filter((c) => c.to === florida)).toHaveLength(4);
      const blocks = await app.prisma.dialBlock.findMany({ where: { campaignId: unnamed } });
      expect(blocks.map((b) => [b.reason, b.detail])).toEqual([['frequency_cap', 'US-FL']]);

      // The subject is a campaign setting on GraphQL, recorded in its history.
      const { data, errors } = await app.gql(
        `mutation ($id: UUID!) { updateCampaign(id: $id, input: { callSubject: "billing" }) { callSubject } }`,
        { id: unnamed },
        setup.token,
      );
      expect(errors, JSON.stringify(errors)).toBeUndefined();
      expect(data.updateCampaign.callSubject).toBe('billing');
      const changes = await app.prisma.campaignChange.findMany({ where: { campaignId: unnamed }, orderBy: { seq: 'asc' } });
      expect(changes.at(-1)!.changes).toMatchObject({ call_subject: { from: null, to: 'billing' } });
    },
    SLOW,
  );

  it(
    'never lets two workers both place the call over the cap: four workers, four campaigns, the same numbers',
    async () => {
      const clock = new ManualClock(new Date('2026-11-03T15:00:00Z'));
      const env = dialerEnv(app, clock);
      const placedBy = new Map<string, ReturnType<typeof manualDialer>>();
      // Calls end at once, so a number is free for the next worker's claim as soon as the last one ends.
      const telephony = new RecordingTelephony(
        clock,
        () => ({ outcome: 'human', durationSeconds: 0 }),
        () => (r) => placedBy.get(r.attemptId)!.dialer.report(r),
      );
      const workers = [0, 1, 2, 3].map(() => {
        const worker: ReturnType<typeof manualDialer> = manualDialer(env, {
          placeCall: async (call) => {
            placedBy.set(call.attemptId, worker);
            return telephony.placeCall(call);
          },
          stop: () => undefined,
        });
        return worker;
      });
      const phones = Array.from({ length: 12 }, (_, i) => `+1305${5_550_400 + i}`);
      const setup = await runningCampaign(app, env, { rows: phones.map((Phone) => ({ Phone })), campaign: RULES_ON });
      const campaigns = [setup.campaignId];
      for (let i = 0; i < 3; i += 1) campaigns.push(await anotherCampaign(env, setup, phones));

      // Every worker ticks its own campaign at once, round after round: a number in flight elsewhere waits.
      for (let round = 0; round < 30; round += 1) {
        await Promise.all(workers.map((worker, i) => worker.run(campaigns[i]!)));
        const due = await app.prisma.campaignContact.count({
          where: { campaignId: { in: campaigns }, state: { in: ['pending', 'dialing'] }, nextAttemptAt: { lte: clock.now() } },
        });
        if (due === 0) break;
      }
      for (const phone of phones)
        expect(
          telephony.placed.filter((c) => c.to === phone),
          phone,
        ).toHaveLength(3);
      expect(telephony.overlaps).toBe(0);
      expect(await app.prisma.callAttempt.count({ where: { userId: setup.userId } })).toBe(36);
      const capped = await app.prisma.dialBlock.findMany({
        where: { userId: setup.userId, reason: 'frequency_cap' },
        select: { contactId: true },
      });
      const cappedNumbers = await app.prisma.contact.findMany({
        where: { id: { in: capped.map((b) => b.contactId) } },
        select: { phoneNumber: true },
      });
      expect(new Set(cappedNumbers.map((c) => c.phoneNumber))).toEqual(new Set(phones));
    },
    SLOW,
  );

  it(
    'reads the calls it counts under the number’s lock: a claim waits for a call being claimed elsewhere, and counts it',
    async () => {
      const clock = new ManualClock(new Date('2026-11-03T15:00:00Z'));
      const env = dialerEnv(app, clock);
      const dialer = recordingDialer(env, () => ({ outcome: 'no_answer', durationSeconds: 0 }));
      const florida = '+13055550499';
      const setup = await runningCampaign(app, env, { rows: [{ Phone: florida }], campaign: RULES_ON });
      const others = [await anotherCampaign(env, setup, [florida]), await anotherCampaign(env, setup, [florida])];
      for (const id of others) {
        await dialer.run(id);
        clock.advance(60_000);
      }
      expect(dialer.telephony.placed).toHaveLength(2);

      // Another worker's claim of the third call, under the number's lock: this campaign's tick starts
      // meanwhile, and may only read the calls once that claim committed.
      const third = randomUUID();
      const contact = await app.prisma.campaignContact.findFirstOrThrow({ where: { campaignId: others[0] } });
      const insert = statement(
        'test.third_call',
        `INSERT INTO call_attempts (id, user_id, campaign_id, contact_id, attempt_number, status, to_number, created_at, updated_at)
       VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, 2, 'completed', $5, $6, $6)`,
      );
      let ticked = false;
      let tick: Promise<void> | undefined;
      await app.sql.transaction(async (tx) => {
        await lockCallHistories(tx, setup.userId, [florida], new Date(0), null);
        tick = dialer.run(setup.campaignId).then(() => {
          ticked = true;
        });
        await tx.run(insert, [third, setup.userId, others[0], contact.contactId, florida, clock.now()]);
        // Holding the lock, this transaction has not committed: the tick cannot have decided yet.
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(ticked).toBe(false);
      });
      await tick;
      expect(dialer.telephony.placed).toHaveLength(2);
      const block = await app.prisma.dialBlock.findFirstOrThrow({ where: { campaignId: setup.campaignId } });
      expect([block.reason, block.detail]).toEqual(['frequency_cap', 'US-FL']);
    },
    SLOW,
  );
});
