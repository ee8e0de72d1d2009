import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareVariants, normalCdf, type VariantMetrics } from '../src/services/results/variants.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, dispatch, type Customer } from './support/campaigns.js';
import { dialerEnv, ManualClock, recordingDialer } from './support/dialer.js';
import { createAgent } from './support/fixtures.js';
import { ALWAYS_OPEN } from './support/live.js';

// A/B agents: a campaign runs agent variants with weights; each contact is given one, the same on every
// call; the report splits its figures by variant, with a two-proportion test of the share reached.

const SET = `mutation ($id: UUID!, $input: SetCampaignVariantsInput!) { setCampaignVariants(id: $id, input: $input) {
  variants { name weight agent { id } } } }`;

const figures = (name: string, attempted: number, reached: number): VariantMetrics => ({
  variantId: name,
  name,
  agentId: name,
  weight: 1,
  contacts: attempted,
  attempted,
  reached,
  reachRate: attempted ? reached / attempted : 0,
  appointments: 0,
  calls: attempted,
  averageDurationSeconds: 0,
  costCents: 0n,
});

describe('the comparison', () => {
  it('is a two-proportion z-test at 95%, said plainly', () => {
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
    expect(normalCdf(-1)).toBeCloseTo(0.158655, 6);
    // 30% of 400 against 22.5% of 400: z = 0.075 / sqrt(0.2625 * 0.7375 * 2 / 400) = 2.4107, p = 0.0159.
    const clear = compareVariants([figures('B', 400, 90), figures('A', 400, 120)])!;
    expect(clear).toMatchObject({ variants: ['A', 'B'], significant: true });
    expect(clear.zScore).toBeCloseTo(2.4107, 3);
    expect(clear.pValue).toBeCloseTo(0.0159, 3);
    expect(clear.statement).toBe('A reached 30% of the contacts it called, B 22.5%: the difference is significant at 95% (p = 0.0159).');
    const unclear = compareVariants([figures('A', 200, 50), figures('B', 200, 45)])!;
    expect(unclear.significant).toBe(false);
    expect(unclear.statement).toContain('is not significant at 95%');
    expect(compareVariants([figures('A', 0, 0), figures('B', 0, 0)])!.statement).toBe('Not enough calls to compare A and B yet.');
    expect(compareVariants([figures('A', 10, 1)])).toBeNull();
  });
});

describe('a campaign with two agent variants', () => {
  let app: TestApp;
  let who: Customer;
  beforeAll(async () => {
    app = await startTestApp();
    who = await customer(app, { contacts: 600, credits: 10_000_000 });
  });
  afterAll(() => app.close());

  it('gives each contact one variant by weight, the same on every call, and splits the report by it', async () => {
    const second = await createAgent(app, who.token, { name: 'Challenger' });
    await app.prisma.agent.update({ where: { id: who.agent.id }, data: { providerAgentId: 'agent_control' } });
    await app.prisma.agent.update({ where: { id: second.id }, data: { providerAgentId: 'agent_challenger' } });
    const id = (
      await createCampaign(app, who, { ...ALWAYS_OPEN, concurrent_calls: 50, max_retry_days: 1, schedule_config: { max_attempts: 2 } })
    ).id;
    const set = await app.gql(
      SET,
      {
        id,
        input: {
          variants: [
            { agentId: who.agent.id, name: 'Control', weight: 70 },
            { agentId: second.id, name: 'Challenger', weight: 30 },
          ],
        },
      },
      who.token,
    );
    expect(set.errors).toBeUndefined();
    expect(set.data.setCampaignVariants.variants).toEqual([
      { name: 'Control', weight: 70, agent: { id: who.agent.id } },
      { name: 'Challenger', weight: 30, agent: { id: second.id } },
    ]);
    expect((await dispatch(app, who.token, id)).status).toBe(202);

    // The challenger reaches more people: 60% against 40%, drawn from the number, not the variant's order.
    const roll = (to: string, attempt: number) => createHash('sha256').update(`${to}:${attempt}`).digest().readUInt32BE(0) / 2 ** 32;
    const run = recordingDialer(dialerEnv(app, new ManualClock(new Date(Date.now() + 1000))), (call) => {
      const reaches = roll(call.to, call.attemptNumber) < (call.providerAgentId === 'agent_challenger' ? 0.6 : 0.4);
      return reaches ? { outcome: 'human', durationSeconds: 60 } : { outcome: 'no_answer', durationSeconds: 0 };
    });
    await run.run(id);
    // Retries are due an hour later, which may be the next day (max_retry_days lets them happen then).
    const clockRun = recordingDialer(dialerEnv(app, new ManualClock(new Date(Date.now() + 2 * 3_600_000))), (call) => {
      const reaches = roll(call.to, call.attemptNumber) < (call.providerAgentId === 'agent_challenger' ? 0.6 : 0.4);
      return reaches ? { outcome: 'human', durationSeconds: 60 } : { outcome: 'no_answer', durationSeconds: 0 };
    });
    await clockRun.run(id);
    const placed = [...run.telephony.placed, ...clockRun.telephony.placed];

    // Stable: every call to a contact went to the same variant's agent, and retries happened.
    const agentOf = new Map<string, Set<string | null>>();
    for (const call of placed) agentOf.set(call.to, (agentOf.get(call.to) ?? new Set()).add(call.providerAgentId));
    expect([...agentOf.values()].every((agents) => agents.size === 1)).toBe(true);
    expect(placed.some((c) => c.attemptNumber === 2)).toBe(true);
    const challengers = [...agentOf.values()].filter((a) => a.has('agent_challenger')).length;
    expect(challengers / agentOf.size).toBeGreaterThan(0.24);
    expect(challengers / agentOf.size).toBeLessThan(0.36);

    // The split's figures, counted again from the calls the telephony saw and the attempts' costs.
    const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: id } });
    const byNumber = new Map(attempts.map((a) => [`${a.toNumber}:${a.attemptNumber}`, a]));
    const expected = (agent: string) => {
      const calls = placed.filter((c) => c.providerAgentId === agent);
      const contacts = new Set(calls.map((c) => c.to));
      const rows = calls.map((c) => byNumber.get(`${c.to}:${c.attemptNumber}`)!);
      const reached = new Set(rows.filter((a) => a.outcome === 'human').map((a) => a.toNumber));
      const talked = rows.filter((a) => (a.durationSeconds ?? 0) > 0);
      return {
        attempted: contacts.size,
        reached: reached.size,
        calls: calls.length,
        averageDurationSeconds: talked.length ? 60 : 0,
        costCents: Number(rows.reduce((sum, a) => sum + a.costCents, 0n)),
      };
    };
    const REPORT = `query ($id: UUID!) { campaign(id: $id) { report { metrics {
      variants { name attempted reached calls averageDurationSeconds costCents appointments }
      variantComparison { significant statement variants } } } } }`;
    const { data } = await app.gql(REPORT, { id }, who.token);
    const [control, challenger] = data.campaign.report.metrics.variants;
    expect(control).toEqual({ name: 'Control', appointments: 0, ...expected('agent_control') });
    expect(challenger).toEqual({ name: 'Challenger', appointments: 0, ...expected('agent_challenger') });
    expect(data.campaign.report.metrics.variantComparison.statement).toMatch(/^Challenger reached .* Control .*significant at 95%/);

    const v1 = await app.request('GET', `/api/v1/campaigns/${id}/report/`, { token: who.token });
    expect(v1.json.metrics.variants.map((v: { name: string; reached: number }) => [v.name, v.reached])).toEqual([
      ['Control', control.reached],
      ['Challenger', challenger.reached],
    ]);
    expect(v1.json.metrics.variantComparison.statement).toBe(data.campaign.report.metrics.variantComparison.statement);

    // Set before the start only; refused with field errors otherwise.
    const late = await app.gql(SET, { id, input: { variants: [] } }, who.token);
    expect(late.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });

  it('refuses one variant, an unknown agent, and another user’s campaign', async () => {
    const id = (await createCampaign(app, who, ALWAYS_OPEN)).id;
    const one = await app.gql(SET, { id, input: { variants: [{ agentId: who.agent.id, name: 'Only', weight: 1 }] } }, who.token);
    expect(one.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const unknown = await app.gql(
      SET,
      {
        id,
        input: {
          variants: [
            { agentId: who.agent.id, name: 'A', weight: 1 },
            { agentId: crypto.randomUUID(), name: 'B', weight: 1 },
          ],
        },
      },
      who.token,
    );
    expect(unknown.errors?.[0]?.extensions?.fieldErrors).toEqual({ 'variants.1.agentId': ['No agent with this id.'] });
    const stranger = await app.token();
    const theirs = await app.gql(SET, { id, input: { variants: [] } }, stranger);
    expect(theirs.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
