import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import codesFile from '../src/services/calling-rules/data/nanp-area-codes.json' with { type: 'json' };
import rulesFile from '../src/services/calling-rules/data/calling-rules.json' with { type: 'json' };
import { enrollContacts } from '../src/services/campaigns/store.js';
import { importContacts } from '../src/services/contacts/import.js';
import { SimulatedTelephony } from '../src/services/voice/providers/simulated/telephony.js';
import type { CallResult, PlaceCall, Telephony } from '../src/services/voice/providers/telephony.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, manualDialer, runningCampaign } from './support/dialer.js';

// A simulated run of 10,000 contacts over a week that holds a public holiday and a weekend: callees in
// many states and provinces, some without the consent their campaign requires, some on the do-not-call
// list, a shared pool of caller IDs with limits, every outcome the simulator makes, and a spend cap.
// Afterwards a checker that shares no code with the dialer's rules reads the database and the calls the
// telephony saw, and counts violations: calls outside the regional hours of the rules table, without the
// required consent, to a listed number, over a caller ID's limits, cents over the cap, charges for calls
// that never reached anyone.

const AREA_CODES = [
  '201', '212', '305', '407', '850', '512', '713', '801', '401', '602', '415', '213', '312', '812', '270',
  '205', '504', '405', '410', '617', '601', '215', '605', '206', '416', '604',
]; // prettier-ignore
const PER_CODE = 385; // 26 codes: 10,010 contacts
const START = new Date('2026-11-25T12:00:00Z'); // the Wednesday before Thanksgiving
const FEDERAL_HOLIDAYS = new Set(['2026-11-26', '2026-12-25']);
const POOL = [
  { number: '+12125550100', maxCallsPerHour: 120, maxCallsPerDay: 700 },
  { number: '+13055550100', maxCallsPerHour: 120, maxCallsPerDay: 700 },
  { number: '+15125550100', maxCallsPerHour: 120, maxCallsPerDay: 700, cooldownAfterUnanswered: 12, cooldownMinutes: 15 },
  { number: '+18015550100', maxCallsPerHour: 120, maxCallsPerDay: 700 },
  { number: '+16025550100', maxCallsPerHour: 120, maxCallsPerDay: 700, restBelowAnswerRate: 0.2, restWindowCalls: 40, restHours: 6 },
];
const SPEND_CAP = 150_000n;

type Rule = (typeof rulesFile.rules)[number];
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));

/** The checker's own reading of the rules table: may `phone` be called at `at`? */
function allowedByTable(at: Date, phone: string): boolean {
  const entry = (codesFile.codes as Record<string, { region: string | null; zones: string[] }>)[phone.slice(2, 5)];
  if (!entry?.region) return true;
  const region = entry.region;
  const country = region.slice(0, 2);
  // A bill not yet law (enacted: false) is not applied.
  const rules = rulesFile.rules.filter(
    (r: Rule) => (r.region === region || r.region === country) && !('enacted' in r && r.enacted === false),
  );
  return entry.zones.every((zone) =>
    rules.every((rule: Rule) => {
      // A rule stated in a fixed clock (Mississippi's Central Standard Time) reads that clock.
      const local = DateTime.fromJSDate(at, { zone: 'clock' in rule ? rule.clock : zone });
      const day = WEEKDAYS[local.weekday - 1]!;
      const minute = local.hour * 60 + local.minute;
      if ((rule.barredDays as string[]).includes(day)) return false;
      if (rule.holidays && FEDERAL_HOLIDAYS.has(local.toISODate()!)) return false;
      const windows = ((rule.hours as Record<string, string[][]>)[day] ?? rule.hours.default) as [string, string][];
      return windows.some(([from, to]) => minute >= minutes(from) && minute < minutes(to));
    }),
  );
}

/** The simulator, watched: every call as it was placed, and any number called twice at once. */
class WatchedTelephony implements Telephony {
  readonly placed: (PlaceCall & { at: Date })[] = [];
  readonly inFlight = new Map<string, string>();
  overlaps = 0;
  constructor(
    private readonly clock: ManualClock,
    private readonly inner: SimulatedTelephony,
  ) {}
  async placeCall(call: PlaceCall) {
    if ([...this.inFlight.values()].includes(call.to)) this.overlaps += 1;
    this.inFlight.set(call.attemptId, call.to);
    this.placed.push({ ...call, at: this.clock.now() });
    return this.inner.placeCall(call);
  }
  stop() {}
}

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe('a 10,000-contact compliance run, checked independently', () => {
  const clock = new ManualClock(START);
  let telephony: WatchedTelephony;
  let userId: string;
  let token: string;
  let campaigns: { capped: string; open: string };
  const results = new Map<string, CallResult>();

  beforeAll(async () => {
    const env = dialerEnv(app, clock);
    const person = (code: string, i: number) => ({
      Phone: `+1${code}555${String(1000 + i).padStart(4, '0')}`,
      'First Name': `P${code}${i}`,
      // Most gave the consent to be called; fewer to an AI voice.
      'Consent to call': i % 7 === 3 ? 'no' : '2026-10-01',
      'AI call consent': i % 3 === 0 ? '' : 'yes',
    });
    const rows = AREA_CODES.flatMap((code) => Array.from({ length: PER_CODE }, (_, i) => person(code, i)));
    const half = Math.floor(rows.length / 2);
    const listed = rows.filter((_, i) => i % 31 === 5).map((r) => r.Phone);
    // One attempt a day, days counted in Chicago: retries fall on Thanksgiving and on the weekend.
    const schedule = {
      max_attempts: 4,
      max_attempts_per_day: 1,
      retry_interval_minutes: 90,
      retry_budgets: { busy: { max_retries: 2, retry_after_minutes: 20 }, voicemail: { max_retries: 1 } },
    };
    const campaignFields = {
      concurrentCalls: 60,
      regionalRules: true,
      requiredConsent: ['calls'],
      maxRetryDays: 5,
      timezone: 'America/Chicago',
    };
    const setup = await runningCampaign(app, env, {
      rows: rows.slice(0, half),
      doNotCall: listed,
      creditsCents: 50_000_000,
      campaign: { ...campaignFields, spendCapCents: SPEND_CAP, scheduleConfig: schedule },
    });
    userId = setup.userId;
    token = setup.token;
    const second = await importContacts(setup.ctx, { group_name: 'Second half', csv_data: rows.slice(half) });
    const open = await app.prisma.campaign.create({
      data: {
        userId,
        agentId: setup.agent.id,
        contactGroupId: second.groupId,
        name: 'Open',
        status: 'running',
        startedAt: START,
        callingHours: { start: '00:00', end: '24:00' },
        activeDays: [...WEEKDAYS],
        ...campaignFields,
        requiredConsent: ['calls', 'ai_calls'],
        scheduleConfig: { ...schedule, voicemail: { action: 'leave_message', message: 'Hello {{first_name}}, please call us back.' } },
      },
    });
    await enrollContacts(app.sql, open.id, START);
    campaigns = { capped: setup.campaignId, open: open.id };
    for (const { number, ...limits } of POOL) {
      const { errors } = await app.gql(
        `mutation ($agentId: UUID!, $input: AddCallerIdInput!) { addCallerId(agentId: $agentId, input: $input) { id } }`,
        { agentId: setup.agent.id, input: { phoneNumber: number, ...limits } },
        token,
      );
      expect(errors).toBeUndefined();
    }

    let dialer: ReturnType<typeof manualDialer>;
    const simulator = new SimulatedTelephony({ seed: 'compliance-run', timeScale: 0 }, (result) => {
      telephony.inFlight.delete(result.attemptId);
      results.set(result.attemptId, result);
      dialer.dialer.report(result);
    });
    telephony = new WatchedTelephony(clock, simulator);
    dialer = manualDialer(env, telephony);
    const ids = [campaigns.capped, campaigns.open];
    for (let step = 0; step < 3_000; step += 1) {
      for (const id of ids) await dialer.run(id);
      const [next] = await app.prisma.$queryRaw<{ at: Date | null }[]>`
        SELECT min(cc.next_attempt_at) AS at FROM campaign_contacts cc JOIN campaigns k ON k.id = cc.campaign_id
        WHERE cc.campaign_id = ANY(${ids}::uuid[]) AND cc.state = 'pending' AND k.status = 'running'`;
      if (!next?.at) break;
      // Due now but not called: the caller IDs are at their limits; a few minutes free some.
      clock.set(new Date(Math.max(next.at.getTime(), clock.now().getTime() + 5 * 60_000)));
      await dialer.dialer.sweep();
    }
    await dialer.dialer.settled();
  }, 900_000);

  it('placed thousands of calls, with every outcome, and finished or stopped at the cap', async () => {
    expect(telephony.placed.length).toBeGreaterThan(6_000);
    expect(new Set([...results.values()].map((r) => r.outcome)).size).toBe(8);
    const states = await app.prisma.campaign.findMany({ where: { id: { in: [campaigns.capped, campaigns.open] } } });
    const capped = states.find((c) => c.id === campaigns.capped)!;
    expect([capped.status, capped.pausedReason]).toEqual(['paused', 'spend_cap_reached']);
    expect(states.find((c) => c.id === campaigns.open)!.status).toBe('completed');
    expect(telephony.overlaps).toBe(0);
  });

  it('made 0 calls outside the regional hours of the rules table', () => {
    const outside = telephony.placed.filter((c) => !allowedByTable(c.at, c.to));
    expect(outside.map((c) => `${c.to} at ${c.at.toISOString()}`)).toEqual([]);
  });

  it('made 0 calls without the consents the campaign requires, and 0 to a listed number', async () => {
    const [missing] = await app.prisma.$queryRaw<{ calls: number }[]>`
      SELECT count(*)::int AS calls FROM call_attempts a JOIN campaigns k ON k.id = a.campaign_id
      WHERE a.user_id = ${userId}::uuid AND EXISTS (
        SELECT 1 FROM unnest(k.required_consent) AS need(kind)
        WHERE NOT EXISTS (SELECT 1 FROM contact_consents g WHERE g.contact_id = a.contact_id AND g.kind = need.kind AND g.revoked_at IS NULL))`;
    expect(missing!.calls).toBe(0);
    // Listed before the run: never called. Listed by an opt-out during a call: never called after that call ended.
    const entries = await app.prisma.doNotCallEntry.findMany({ where: { userId } });
    const optedOutAt = new Map<string, number>();
    const attempts = await app.prisma.callAttempt.findMany({ where: { userId }, orderBy: { createdAt: 'asc' } });
    for (const a of attempts) {
      if (results.get(a.id)?.doNotCall && !optedOutAt.has(a.toNumber!)) optedOutAt.set(a.toNumber!, a.endedAt!.getTime());
    }
    const listedBefore = new Set(entries.filter((e) => e.source !== 'call').map((e) => e.phoneNumber));
    const toListed = attempts.filter(
      (a) => listedBefore.has(a.toNumber!) || (optedOutAt.has(a.toNumber!) && a.createdAt.getTime() > optedOutAt.get(a.toNumber!)!),
    );
    expect(entries.filter((e) => e.source === 'call').length).toBe(optedOutAt.size);
    expect(optedOutAt.size).toBeGreaterThan(0);
    expect(toListed.map((a) => a.toNumber)).toEqual([]);
  });

  it("made 0 calls over a caller ID's calls per hour or per day", () => {
    const byNumber = new Map<string, number[]>();
    for (const call of telephony.placed) byNumber.set(call.from, [...(byNumber.get(call.from) ?? []), call.at.getTime()]);
    const over: string[] = [];
    for (const n of POOL) {
      const times = (byNumber.get(n.number) ?? []).sort((a, b) => a - b);
      expect(times.length, n.number).toBeGreaterThan(0);
      times.forEach((t, i) => {
        const inHour = times.filter((u) => u > t - 3_600_000 && u <= t).length;
        const inDay = times.slice(0, i + 1).filter((u) => u > t - 86_400_000).length;
        if (inHour > n.maxCallsPerHour || inDay > n.maxCallsPerDay) over.push(`${n.number} at ${new Date(t).toISOString()}`);
      });
    }
    expect(over).toEqual([]);
  });

  it('charged 0 cents over the spend cap and 0 for calls that reached nobody', async () => {
    const [charged] = await app.prisma.$queryRaw<{ spent: bigint }[]>`
      SELECT coalesce(sum(-amount_cents), 0)::bigint AS spent FROM credit_transactions
      WHERE campaign_id = ${campaigns.capped}::uuid AND kind = 'call_charge'`;
    expect(charged!.spent).toBeLessThanOrEqual(SPEND_CAP);
    const attempts = await app.prisma.callAttempt.findMany({ where: { userId }, include: { transactions: true } });
    const unconnected = attempts.filter((a) => {
      const result = results.get(a.id);
      const billable = a.outcome === 'human' || (a.outcome === 'voicemail' && result?.messageLeft === true);
      return !billable && (a.costCents !== 0n || a.transactions.some((t) => t.kind === 'call_charge'));
    });
    expect(unconnected.map((a) => `${a.toNumber} ${a.outcome}`)).toEqual([]);
    // A voicemail left was billed; one hung up on was not.
    expect(attempts.some((a) => a.outcome === 'voicemail' && a.costCents > 0n)).toBe(true);
    expect(attempts.some((a) => a.outcome === 'voicemail' && a.costCents === 0n)).toBe(true);
  });

  it('shows every stopped call with its reason, on GraphQL and v1, and the outcomes of the calls', async () => {
    const reasonsOf = async (where: { campaignId?: string; userId?: string }) =>
      Object.fromEntries(
        (await app.prisma.dialBlock.groupBy({ by: ['reason'], where, _count: true })).map((c) => [c.reason, c._count]),
      ) as Record<string, number>;
    // Over the whole run (the capped campaign stopped on its first day), every reason came up.
    const everywhere = await reasonsOf({ userId });
    for (const reason of ['do_not_call', 'consent_missing', 'regional_hours', 'regional_day', 'holiday']) {
      expect(everywhere[reason] ?? 0, `${reason} in ${JSON.stringify(everywhere)}`).toBeGreaterThan(0);
    }
    const byReason = await reasonsOf({ campaignId: campaigns.capped });
    const total = Object.values(byReason).reduce((sum, n) => sum + n, 0);
    const { data } = await app.gql(
      `query ($id: UUID!) { campaign(id: $id) { report { metrics {
         blocked { total consentMissing holiday }
         outcomes { human voicemail ivr callScreening noAnswer busy failed invalidNumber } } }
         attempts(first: 50) { edges { node { outcome } } } } }`,
      { id: campaigns.capped },
      token,
    );
    expect(data.campaign.report.metrics.blocked).toEqual({
      total,
      consentMissing: byReason.consent_missing,
      holiday: byReason.holiday ?? 0,
    });
    expect(data.campaign.attempts.edges.every((e: { node: { outcome: string | null } }) => e.node.outcome !== null)).toBe(true);
    const byOutcome = await app.prisma.callAttempt.groupBy({ by: ['outcome'], where: { campaignId: campaigns.capped }, _count: true });
    const camel = (word: string) => word.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
    expect(data.campaign.report.metrics.outcomes).toEqual({
      ...{ human: 0, voicemail: 0, ivr: 0, callScreening: 0, noAnswer: 0, busy: 0, failed: 0, invalidNumber: 0 },
      ...Object.fromEntries(byOutcome.map((g) => [camel(g.outcome!), g._count])),
    });
    const v1 = await app.request('GET', `/api/v1/campaigns/${campaigns.capped}/report/`, { token });
    expect(v1.json.metrics.outcomes).toEqual(data.campaign.report.metrics.outcomes);
    expect(v1.json.metrics.blocked).toMatchObject({ total, consentMissing: byReason.consent_missing, doNotCall: byReason.do_not_call });
  });
});
