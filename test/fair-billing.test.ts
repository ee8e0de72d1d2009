import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/services/context.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ledgerMatchesAccount, recordingDialer, runningCampaign } from './support/dialer.js';
import { createAgent } from './support/fixtures.js';

// What the dialer charges. Only calls that connected are billed, for their talk time. A campaign's spend
// cap: no call starts that could take its charges over the cap, counting the calls in flight at what
// they hold, and no charge ever goes over it, whatever a call cost. The test's rate is 60 cents a
// minute and each call holds 5 minutes: 300 cents.

const numbers = (count: number, base: number) => Array.from({ length: count }, (_, i) => ({ Phone: `+1415${base + i}` }));

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

async function charged(campaignId: string) {
  const [row] = await app.prisma.$queryRaw<{ total: bigint }[]>`
    SELECT coalesce(sum(-amount_cents), 0)::bigint AS total FROM credit_transactions WHERE campaign_id = ${campaignId}::uuid AND kind = 'call_charge'`;
  return row!.total;
}

describe('calls that never connected', () => {
  it('cost nothing, whatever duration the provider reported, and give their holds back; a voicemail left is billed by its length', async () => {
    const env = dialerEnv(app, systemClock);
    const setup = await runningCampaign(app, env, {
      rows: numbers(9, 6_300_000),
      campaign: { scheduleConfig: { max_attempts: 1, max_attempts_per_day: 1, retry_interval_minutes: 60, retry_on: [] } },
    });
    const outcomes = [
      { outcome: 'no_answer', durationSeconds: 25 },
      { outcome: 'busy', durationSeconds: 4 },
      { outcome: 'failed', durationSeconds: 9 },
      { outcome: 'invalid_number', durationSeconds: 3 },
      { outcome: 'voicemail', durationSeconds: 40, messageLeft: true },
      { outcome: 'voicemail', durationSeconds: 6, messageLeft: false },
      { outcome: 'ivr', durationSeconds: 12 },
      { outcome: 'call_screening', durationSeconds: 8 },
      { outcome: 'human', durationSeconds: 61 },
    ] as const;
    const run = recordingDialer(env, (_call, index) => outcomes[index]!);
    await run.run(setup.campaignId);

    const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
    const costs = Object.fromEntries(attempts.map((a) => [`${a.outcome}:${a.durationSeconds}`, a.costCents]));
    expect(costs).toEqual({
      'no_answer:25': 0n,
      'busy:4': 0n,
      'failed:9': 0n,
      'invalid_number:3': 0n,
      'voicemail:40': 40n,
      'voicemail:6': 0n,
      'ivr:12': 0n,
      'call_screening:8': 0n,
      'human:61': 61n,
    });
    expect(await charged(setup.campaignId)).toBe(101n);
    const charges = await app.prisma.creditTransaction.count({ where: { campaignId: setup.campaignId, kind: 'call_charge' } });
    expect(charges).toBe(2);
    const { ledger, account, account_ } = await ledgerMatchesAccount(app, setup.userId);
    expect(ledger).toBe(account);
    expect(account_.heldCents).toBe(0n);
  });
});

describe('a campaign spend cap', () => {
  it('starts no call that could go over it, and pauses with spend_cap_reached when none fits', async () => {
    const env = dialerEnv(app, systemClock);
    const setup = await runningCampaign(app, env, { rows: numbers(20, 6_100_000), campaign: { spendCapCents: 1_000n } });
    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 90 }));
    await run.run(setup.campaignId);

    const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId }, include: { spend: true } });
    expect(campaign).toMatchObject({ status: 'paused', pausedReason: 'spend_cap_reached' });
    // 90 cents a call: a ninth call would leave less than one call's hold under the cap.
    expect(run.telephony.placed).toHaveLength(8);
    expect(campaign.spend!.spentCents).toBe(720n);
    expect(await charged(setup.campaignId)).toBe(720n);
    // Three calls' holds fit under 1,000 cents at first, never more.
    expect(run.telephony.maxInFlight).toBeLessThanOrEqual(3);
    const { ledger, account } = await ledgerMatchesAccount(app, setup.userId);
    expect(ledger).toBe(account);
  });

  it('never charges a cent over it, even for calls that cost more than they held', async () => {
    const env = dialerEnv(app, systemClock);
    const setup = await runningCampaign(app, env, { rows: numbers(10, 6_200_000), campaign: { spendCapCents: 1_000n } });
    // Ten minutes each: 600 cents, twice what a call holds.
    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 600 }));
    await run.run(setup.campaignId);

    expect(run.telephony.placed).toHaveLength(3);
    expect(await charged(setup.campaignId)).toBe(1_000n);
    const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
    expect(attempts.reduce((sum, a) => sum + a.costCents, 0n)).toBe(1_000n);
    expect(attempts.map((a) => a.costCents).sort()).toEqual([0n, 400n, 600n]);
    const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId }, include: { spend: true } });
    expect(campaign).toMatchObject({ status: 'paused', pausedReason: 'spend_cap_reached' });
    expect(campaign.spend!.spentCents).toBe(1_000n);
    const { ledger, account, account_ } = await ledgerMatchesAccount(app, setup.userId);
    expect(ledger).toBe(account);
    expect(account_.heldCents).toBe(0n);
  });

  it('is set, read and cleared on GraphQL, and refused when negative', async () => {
    const token = await app.token();
    const agent = await createAgent(app, token);
    const group = await app.gql(
      `mutation { importContacts(input: { groupName: "Capped", rows: [{ Phone: "+14156300001" }] }) { groupId } }`,
      {},
      token,
    );
    const made = await app.gql(
      `mutation($input: CreateCampaignInput!) { createCampaign(input: $input) { id spendCapCents spentCents } }`,
      { input: { name: 'Capped', agentId: agent.id, contactGroupId: group.data.importContacts.groupId, spendCapCents: '5000' } },
      token,
    );
    expect(made.errors).toBeUndefined();
    expect(made.data.createCampaign).toMatchObject({ spendCapCents: 5000, spentCents: 0 });
    const id = made.data.createCampaign.id;
    const cleared = await app.gql(
      `mutation($id: UUID!) { updateCampaign(id: $id, input: { spendCapCents: null }) { spendCapCents } }`,
      { id },
      token,
    );
    expect(cleared.data.updateCampaign.spendCapCents).toBeNull();
    const refused = await app.gql(
      `mutation($id: UUID!) { updateCampaign(id: $id, input: { spendCapCents: "-1" }) { spendCapCents } }`,
      { id },
      token,
    );
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fieldErrors: { spendCapCents: [expect.any(String)] } });
  });
});
