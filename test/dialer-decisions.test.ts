import { describe, expect, it } from 'vitest';
import {
  agentRefusal,
  callsUnderCap,
  campaignOutcome,
  costCorrections,
  creditVerdict,
  endingOf,
  freeSlots,
  planClaim,
  refusalOutcome,
  variablesOf,
} from '../src/services/dialer/decisions.js';
import { isStartRefusal } from '../src/services/campaigns/states.js';
import { DEFAULT_DIALER_OPTIONS } from '../src/services/dialer/options.js';
import type { FinishedAttempt } from '../src/services/dialer/store/ended-calls.js';
import type { Candidate, TickCampaign } from '../src/services/dialer/store/placing.js';
import { CallRefused, type CallResult } from '../src/services/voice/providers/telephony.js';

// The dialer's rules on plain objects: no database, no clock, no telephony.

const now = new Date('2026-11-02T10:00:00Z'); // a Monday

const campaign = (over: Partial<TickCampaign> = {}): TickCampaign => ({
  userId: 'user',
  agentId: 'agent',
  status: 'running',
  concurrentCalls: 10,
  timezone: 'UTC',
  callingHours: { start: '00:00', end: '24:00' },
  activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
  scheduleConfig: {},
  requiredConsent: [],
  regionalRules: false,
  exemptionId: 'exemption',
  spendCapCents: null,
  transferNumber: null,
  purpose: 'solicitation',
  callSubject: null,
  registryCopies: [],
  ...over,
});

const candidate = (i: number, over: Partial<Candidate> = {}): Candidate => ({
  id: `cc${i}`,
  contactId: `c${i}`,
  attempts: 0,
  phoneNumber: `+1415200000${i}`,
  status: 'active',
  timezone: null,
  region: null,
  consents: [],
  revocations: [],
  lastAbandonedAt: null,
  data: { first_name: `Person ${i}` },
  variant: null,
  registry: { registry: null, consentsToCalls: false, relationshipSince: null },
  ...over,
});

const limits = (over: Partial<Parameters<typeof planClaim>[3]> = {}) => ({
  now,
  looked: 10,
  affordable: 100,
  underCap: Infinity,
  callsPerTick: 50,
  pool: null,
  from: '+14155550100',
  histories: new Map(),
  ...over,
});
const idle = { inFlight: 0, live: 0 };

describe('slots', () => {
  it('are taken by the calls in flight, except ended ones waiting to be written, up to a campaign’s worth', () => {
    expect(freeSlots(10, 0, 0)).toBe(10);
    expect(freeSlots(10, 4, 4)).toBe(6);
    // Four of the six in flight ended here and wait to be written: their slots are free.
    expect(freeSlots(10, 6, 2)).toBe(8);
    // A backlog of results beyond a campaign's worth holds the ticks back.
    expect(freeSlots(10, 18, 0)).toBe(2);
    expect(freeSlots(10, 25, 0)).toBe(-5);
  });
});

describe('a tick’s claim', () => {
  it('pauses a campaign whose agent is archived or has no number to call from', () => {
    expect(agentRefusal({ active: false, fromNumber: '+14155550100' })).toBe('agent_archived');
    expect(agentRefusal({ active: false, fromNumber: null })).toBe('agent_archived');
    expect(agentRefusal({ active: true, fromNumber: null })).toBe('agent_has_no_phone_number');
    expect(agentRefusal({ active: true, fromNumber: '+14155550100' })).toBeNull();
  });

  it('claims nothing when every slot is taken', () => {
    expect(planClaim(campaign({ concurrentCalls: 2 }), { inFlight: 2, live: 2 }, [candidate(1)], limits())).toBeNull();
  });

  it('sets aside uncallable contacts for good and waiting ones until their window opens', () => {
    const business = campaign({
      timezone: 'America/New_York',
      callingHours: { start: '09:00', end: '17:00' },
      activeDays: ['mon', 'tue', 'wed', 'thu', 'fri'],
    });
    const plan = planClaim(
      business,
      idle,
      [
        candidate(1, { status: 'do_not_call' }),
        candidate(2, { status: 'invalid' }),
        candidate(3, { phoneNumber: null }),
        // 05:00 in New York: waits for 09:00 there.
        candidate(4),
        // 11:00 in Berlin: called now.
        candidate(5, { timezone: 'Europe/Berlin' }),
      ],
      limits(),
    )!;
    expect(plan.uncallable).toEqual([
      { id: 'cc1', outcome: 'do_not_call' },
      { id: 'cc2', outcome: 'invalid' },
      { id: 'cc3', outcome: 'invalid' },
    ]);
    expect(plan.waiting).toEqual([{ id: 'cc4', nextAttemptAt: new Date('2026-11-02T14:00:00Z') }]);
    expect(plan.chosen.map((c) => c.id)).toEqual(['cc5']);
    expect(plan.unpaid).toBe(false);
    // The look (10) was not all used on callable contacts: more slots may be filled from the next ones.
    expect(plan.more).toBe(false);
  });

  it('takes at most the free slots and a tick’s worth, and asks for more when slots are left', () => {
    const candidates = Array.from({ length: 8 }, (_, i) => candidate(i));
    const full = planClaim(campaign({ concurrentCalls: 5 }), idle, candidates, limits({ looked: 8 }))!;
    expect(full.chosen).toHaveLength(5);
    expect(full.more).toBe(false);
    // A tick takes three; seven slots are free: another tick takes the rest.
    const partial = planClaim(campaign({ concurrentCalls: 10 }), idle, candidates, limits({ looked: 8, callsPerTick: 3 }))!;
    expect(partial.chosen).toHaveLength(3);
    expect(partial.more).toBe(true);
    // Its whole look went on contacts it could not call, and slots are left: more now.
    const spent = [candidate(1, { status: 'invalid' }), candidate(2)];
    const afterSetAside = planClaim(campaign(), idle, spent, limits({ looked: 2 }))!;
    expect(afterSetAside.chosen).toHaveLength(1);
    expect(afterSetAside.more).toBe(true);
  });

  it('calls no more than the balance pays for, and asks for the verdict when it pays for none', () => {
    const candidates = [candidate(1), candidate(2), candidate(3)];
    expect(planClaim(campaign(), idle, candidates, limits({ affordable: 2 }))!.chosen).toHaveLength(2);
    const broke = planClaim(campaign(), idle, candidates, limits({ affordable: 0, looked: 3 }))!;
    expect(broke.chosen).toEqual([]);
    expect(broke.unpaid).toBe(true);
    expect(broke.more).toBe(false);
    // Nothing callable is not the balance's fault.
    expect(planClaim(campaign(), idle, [candidate(1, { status: 'invalid' })], limits({ affordable: 0 }))!.unpaid).toBe(false);
  });

  it('leaves room under a spend cap for what every call in flight and every new one may cost', () => {
    expect(callsUnderCap(null, 10_000n, 5, 300n)).toBe(Infinity);
    // 1,000 cents, 90 spent, one call in flight holding 300: room for two more.
    expect(callsUnderCap(1_000n, 90n, 1, 300n)).toBe(2);
    expect(callsUnderCap(1_000n, 401n, 1, 300n)).toBe(0);
    expect(callsUnderCap(1_000n, 1_200n, 0, 300n)).toBe(0);
    const candidates = [candidate(1), candidate(2), candidate(3)];
    expect(planClaim(campaign(), idle, candidates, limits({ underCap: 2 }))!.chosen).toHaveLength(2);
    const capped = planClaim(campaign(), idle, candidates, limits({ underCap: 0, affordable: 0 }))!;
    expect(capped).toMatchObject({ chosen: [], capped: true, unpaid: false });
  });

  it('retries when the balance covers a call after all, pauses when no call in flight can give credits back, else waits', () => {
    expect(creditVerdict(300n, 0, 300n)).toBe('retry');
    expect(creditVerdict(299n, 0, 300n)).toBe('pause');
    expect(creditVerdict(0n, 3, 300n)).toBe('wait');
  });

  it('gives the agent the contact’s fields', () => {
    expect(variablesOf({ first_name: 'Ada', last_name: 'Lovelace', custom_fields: { plan: 'gold' } })).toEqual({
      plan: 'gold',
      first_name: 'Ada',
      last_name: 'Lovelace',
    });
  });
});

describe('a refused call', () => {
  it('is put back when the provider is busy, and is a failed call otherwise', () => {
    expect(refusalOutcome('a1', new CallRefused('busy', 'retry_later', 30))).toEqual({ retryAfterSeconds: 30 });
    expect(refusalOutcome('a1', new CallRefused('no such number', 'invalid_destination'))).toEqual({
      result: { attemptId: 'a1', outcome: 'invalid_number', durationSeconds: 0, disconnectReason: 'invalid_destination' },
    });
    expect(refusalOutcome('a1', new Error('timeout'))).toEqual({
      result: { attemptId: 'a1', outcome: 'failed', durationSeconds: 0, disconnectReason: 'provider_error' },
    });
  });
});

describe('a finished call', () => {
  const finished = (over: Partial<FinishedAttempt> = {}): FinishedAttempt => ({
    id: 'a1',
    userId: 'user',
    campaignId: 'k1',
    contactId: 'c1',
    enrolmentId: 'cc1',
    attempts: 1,
    firstAttemptAt: new Date('2026-11-02T09:00:00Z'),
    contactTimezone: null,
    phoneNumber: '+14155550142',
    contactData: { first_name: 'Ada', email: 'ada@example.com' },
    campaignTimezone: 'UTC',
    callingHours: { start: '00:00', end: '24:00' },
    activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
    scheduleConfig: { max_attempts: 3, max_attempts_per_day: 2, retry_interval_minutes: 60, retry_on: ['no_answer', 'busy'] },
    maxRetryDays: 3,
    attemptTimes: [new Date('2026-11-02T09:00:00Z')],
    earlierOutcomes: [],
    callbackAt: null,
    optedOutAt: null,
    ...over,
  });
  const result = (over: Partial<CallResult> = {}): CallResult => ({ attemptId: 'a1', outcome: 'no_answer', durationSeconds: 0, ...over });

  it('is retried after the interval by the campaign’s policy, or ends its contact', () => {
    expect(endingOf(finished(), result(), now)).toEqual({
      contact: {
        id: 'cc1',
        state: 'pending',
        outcome: null,
        nextAttemptAt: new Date('2026-11-02T11:00:00Z'),
        readyAt: new Date('2026-11-02T11:00:00Z'),
        lastStatus: 'no_answer',
      },
      blocked: null,
      appointment: null,
    });
    expect(endingOf(finished(), result({ outcome: 'human', durationSeconds: 60 }), now).contact).toEqual({
      id: 'cc1',
      state: 'done',
      outcome: 'reached',
      nextAttemptAt: null,
      lastStatus: 'completed',
    });
    expect(endingOf(finished({ attempts: 3 }), result(), now).contact.outcome).toBe('not_reached');
  });

  it('counts the attempts of the contact’s own local day', () => {
    // Two attempts today in UTC; in Los Angeles the first was yesterday evening.
    const times = [new Date('2026-11-02T05:00:00Z'), new Date('2026-11-02T09:00:00Z')];
    const utc = endingOf(finished({ attempts: 2, attemptTimes: times }), result(), now).contact;
    expect(utc.nextAttemptAt).toEqual(new Date('2026-11-03T00:00:00Z'));
    const la = endingOf(finished({ attempts: 2, attemptTimes: times, contactTimezone: 'America/Los_Angeles' }), result(), now).contact;
    expect(la.nextAttemptAt).toEqual(new Date('2026-11-02T11:00:00Z'));
  });

  it('puts a callee who asked on the do-not-call list, ends an undialable number, and books an appointment', () => {
    const dnc = endingOf(finished(), result({ outcome: 'human', durationSeconds: 30, doNotCall: true }), now);
    expect(dnc.contact).toMatchObject({ state: 'done', outcome: 'do_not_call' });
    expect(dnc.blocked).toEqual({ userId: 'user', phoneNumber: '+14155550142' });
    expect(endingOf(finished(), result({ outcome: 'invalid_number' }), now).contact).toMatchObject({
      state: 'done',
      outcome: 'invalid',
    });
    const scheduledAt = new Date('2026-12-01T15:00:00Z');
    const booked = endingOf(
      finished({ contactTimezone: 'Europe/Paris' }),
      result({ outcome: 'human', durationSeconds: 90, appointment: { scheduledAt, notes: 'Check-up' } }),
      now,
    );
    expect(booked.appointment).toEqual({
      userId: 'user',
      contactId: 'c1',
      campaignId: 'k1',
      callAttemptId: 'a1',
      scheduledAt,
      timezone: 'Europe/Paris',
      contactSnapshot: { first_name: 'Ada', last_name: '', email: 'ada@example.com', phone_number: '+14155550142' },
      appointmentData: { source_call_id: 'a1', notes: 'Check-up' },
    });
  });

  it('has its cost corrected to what was charged where that differs from its price', () => {
    const prices = new Map([
      ['a1', 60n],
      ['a2', 120n],
      ['a3', 0n],
    ]);
    expect(
      costCorrections(
        prices,
        new Map([
          ['a1', 60n],
          ['a2', 45n],
        ]),
      ),
    ).toEqual([{ id: 'a2', costCents: 45n }]);
    expect(costCorrections(new Map([['a4', 30n]]), new Map())).toEqual([{ id: 'a4', costCents: 0n }]);
  });
});

describe('a campaign after results', () => {
  const record = (over = {}) => ({ status: 'running', open: true, recent: 20, failed: 0, ...over });

  it('completes when every contact is done', () => {
    expect(campaignOutcome(record({ open: false }), DEFAULT_DIALER_OPTIONS)).toBe('completed');
  });

  it('trips the breaker on a full window of mostly failed calls only', () => {
    expect(campaignOutcome(record({ failed: 16 }), DEFAULT_DIALER_OPTIONS)).toBe('high_failure_rate');
    expect(campaignOutcome(record({ failed: 15 }), DEFAULT_DIALER_OPTIONS)).toBeNull();
    expect(campaignOutcome(record({ recent: 19, failed: 19 }), DEFAULT_DIALER_OPTIONS)).toBeNull();
  });

  it('leaves a campaign that is not running, or gone, alone', () => {
    expect(campaignOutcome(record({ status: 'paused', open: false }), DEFAULT_DIALER_OPTIONS)).toBeNull();
    expect(campaignOutcome(undefined, DEFAULT_DIALER_OPTIONS)).toBeNull();
  });

  it('pauses a scheduled campaign that cannot start for a reason of its own, and not for others', () => {
    expect(isStartRefusal('no_callable_contacts')).toBe(true);
    expect(isStartRefusal('agent_inactive')).toBe(true);
    expect(isStartRefusal('insufficient_credits')).toBe(false);
    expect(isStartRefusal(undefined)).toBe(false);
  });
});
