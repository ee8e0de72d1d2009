import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AI_DISCLOSURE_SENTENCE } from '../src/services/calling-rules/disclosure.js';
import { enrollContacts } from '../src/services/campaigns/store.js';
import { BRAIN_ENGINE } from '../src/services/voice/brain/conversation.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';

// The regional rules where the database is involved: the dialer reads the consent a callee's law
// requires and the abandoned calls to a number, and dispatch refuses a provider-hosted agent that does
// not say it is an AI to people whose law requires it, on both surfaces.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const DISPATCH = `mutation($id: UUID!) { dispatchCampaign(id: $id, triggeredBy: "tests") { success status } }`;

describe('dispatch and the AI disclosure', () => {
  /** A draft campaign calling these numbers, its agent hosted at the voice provider with this begin message. */
  async function draft(numbers: string[], beginMessage: string | null, engine = 'retell-llm') {
    const env = dialerEnv(app, new ManualClock(new Date()));
    const setup = await runningCampaign(app, env, {
      rows: numbers.map((Phone) => ({ Phone })),
      campaign: { status: 'draft', regionalRules: true },
    });
    await app.prisma.agent.update({
      where: { id: setup.agent.id },
      data: { responseEngineType: engine, agentProfile: beginMessage === null ? {} : { begin_message: beginMessage } },
    });
    return setup;
  }

  it('refuses, with the regions and the sentence to say, when Californians would hear an agent that does not disclose', async () => {
    const setup = await draft(['+14155550101', '+12125550102'], 'Hi, this is Sam from Acme Dental.');
    const v1 = await app.request('POST', `/api/v1/campaigns/${setup.campaignId}/dispatch/`, {
      token: setup.token,
      body: { triggered_by: 'tests' },
    });
    expect(v1.status).toBe(409);
    expect(v1.json).toEqual({
      success: false,
      campaign_id: setup.campaignId,
      triggered_by: 'tests',
      reason: 'ai_disclosure_missing',
      detail: expect.stringContaining('US-CA (California: AB 2905'),
    });
    expect(v1.json.detail).toContain(AI_DISCLOSURE_SENTENCE);
    expect(v1.json.detail).not.toContain('US-NY');
    const gql = await app.gql(DISPATCH, { id: setup.campaignId }, setup.token);
    expect(gql.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', reason: 'ai_disclosure_missing' });
    const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } });
    expect(campaign.status).toBe('draft');
  });

  it('refuses an agent with no begin message, and one for callees in the EU since the AI Act applies', async () => {
    const silent = await draft(['+14155550111'], null);
    const gql = await app.gql(DISPATCH, { id: silent.campaignId }, silent.token);
    expect(gql.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', reason: 'ai_disclosure_missing' });
    const paris = await draft(['+33144556677'], 'Bonjour, ici Sam de la clinique.');
    const refused = await app.request('POST', `/api/v1/campaigns/${paris.campaignId}/dispatch/`, { token: paris.token });
    expect([refused.status, refused.json.reason]).toEqual([409, 'ai_disclosure_missing']);
    expect(refused.json.detail).toContain('FR (EU AI Act');
  });

  it('dispatches a begin message that discloses, the built-in agent, and callees where no rule requires it', async () => {
    const disclosing = await draft(['+14155550121'], "Hi! I'm an AI assistant calling for Acme Dental.");
    expect((await app.gql(DISPATCH, { id: disclosing.campaignId }, disclosing.token)).data).toEqual({
      dispatchCampaign: { success: true, status: 'running' },
    });
    const builtIn = await draft(['+14155550131'], 'Hi, this is Sam from Acme Dental.', BRAIN_ENGINE);
    expect((await app.gql(DISPATCH, { id: builtIn.campaignId }, builtIn.token)).data?.dispatchCampaign.status).toBe('running');
    const newYork = await draft(['+12125550141', '+442079460958'], 'Hi, this is Sam from Acme Dental.');
    const v1 = await app.request('POST', `/api/v1/campaigns/${newYork.campaignId}/dispatch/`, { token: newYork.token });
    expect([v1.status, v1.json.success]).toEqual([202, true]);
    // A contact whose own region is California counts, whatever its number says.
    const moved = await draft(['+12125550151'], 'Hi, this is Sam from Acme Dental.');
    await app.prisma.$executeRaw`UPDATE contacts SET data = data || '{"region": "US-CA"}' WHERE user_id = ${moved.userId}::uuid`;
    expect((await app.gql(DISPATCH, { id: moved.campaignId }, moved.token)).errors?.[0]?.extensions?.reason).toBe('ai_disclosure_missing');
  });

  it('gives the agents made from the seeded templates a begin message that discloses', async () => {
    const env = dialerEnv(app, new ManualClock(new Date()));
    const setup = await runningCampaign(app, env, {
      rows: [{ Phone: '+14155550161' }],
      campaign: { status: 'draft', regionalRules: true },
    });
    const agent = await app.prisma.agent.findUniqueOrThrow({ where: { id: setup.agent.id } });
    expect(agent.agentProfile).toMatchObject({ begin_message: AI_DISCLOSURE_SENTENCE });
    expect((await app.gql(DISPATCH, { id: setup.campaignId }, setup.token)).data?.dispatchCampaign.status).toBe('running');
  });
});

describe('the dialer and the regional rules that need the database', () => {
  it('skips a French callee without the consent France requires from 11 August 2026, though the campaign asks none', async () => {
    // Wednesday 4 November 2026, 11:00 in Paris.
    const clock = new ManualClock(new Date('2026-11-04T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const setup = await runningCampaign(app, env, {
      rows: [{ Phone: '+33144556677', 'Consent to call': '2026-10-01' }, { Phone: '+33144556688' }],
      campaign: { regionalRules: true, requiredConsent: [] },
    });
    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    await run.run(setup.campaignId);
    expect(run.telephony.placed.map((c) => c.to)).toEqual(['+33144556677']);
    const blocks = await app.prisma.dialBlock.findMany({ where: { campaignId: setup.campaignId }, include: { contact: true } });
    expect(blocks.map((b) => [b.contact.phoneNumber, b.reason, b.detail])).toEqual([['+33144556688', 'consent_missing', 'calls (FR)']]);
  });

  it('calls a UK number again only 24 hours after a call to it was abandoned, by any campaign of the customer', async () => {
    // Wednesday 4 November 2026, 10:00 in London.
    const clock = new ManualClock(new Date('2026-11-04T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const abandoned = '+442079460958';
    const dropped = '+442079460959'; // failed before anyone answered: not abandoned
    const setup = await runningCampaign(app, env, {
      rows: [{ Phone: abandoned }, { Phone: dropped }],
      campaign: {
        regionalRules: true,
        scheduleConfig: { max_attempts: 3, max_attempts_per_day: 3, retry_interval_minutes: 60, retry_on: ['failed'] },
      },
    });
    let calls = 0;
    const run = recordingDialer(env, (call) => {
      calls += 1;
      if (calls > 2) return { outcome: 'human', durationSeconds: 30 };
      return call.to === abandoned ? { outcome: 'failed', durationSeconds: 4 } : { outcome: 'failed', durationSeconds: 0 };
    });
    await run.run(setup.campaignId);
    await run.dialer.settled();
    const first = await app.prisma.callAttempt.findFirstOrThrow({ where: { campaignId: setup.campaignId, toNumber: abandoned } });
    const again = new Date(first.endedAt!.getTime() + 24 * 3_600_000);

    clock.set('2026-11-04T11:30:00Z'); // the retry interval has passed for both
    await run.run(setup.campaignId);
    await run.dialer.settled();
    expect(run.telephony.placed.map((c) => c.to).sort()).toEqual([abandoned, dropped, dropped].sort());
    const block = await app.prisma.dialBlock.findFirstOrThrow({ where: { campaignId: setup.campaignId, reason: 'abandoned_recall' } });
    expect([block.detail, block.until]).toEqual(['GB', again]);

    // Another campaign of the same customer is held as well.
    const other = await app.prisma.campaign.create({
      data: {
        userId: setup.userId,
        agentId: setup.agent.id,
        contactGroupId: setup.groupId,
        name: 'Second campaign',
        status: 'running',
        startedAt: clock.now(),
        callingHours: { start: '00:00', end: '24:00' },
        activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
        timezone: 'UTC',
        regionalRules: true,
      },
    });
    await enrollContacts(app.sql, other.id, clock.now());
    await run.run(other.id);
    await run.dialer.settled();
    expect(run.telephony.placed.filter((c) => c.to === abandoned)).toHaveLength(1);

    clock.set(again);
    await run.run(setup.campaignId);
    await run.dialer.settled();
    expect(run.telephony.placed.filter((c) => c.to === abandoned)).toHaveLength(2);
  });
});
