import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, policyOf } from '../src/services/calling-rules/retry-policy.js';
import { isOpen, nextOpening, windowOf } from '../src/services/calling-rules/window.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';

const weekdays9to5 = windowOf({ start: '09:00', end: '17:00' }, ['mon', 'tue', 'wed', 'thu', 'fri']);

describe('calling window', () => {
  it('follows the wall clock of the zone across daylight-saving changes', () => {
    // New York: EDT (UTC-4) until 2026-11-01 02:00, EST (UTC-5) after.
    expect(isOpen(new Date('2026-10-30T13:00:00Z'), 'America/New_York', weekdays9to5)).toBe(true); // Fri 09:00 EDT
    expect(isOpen(new Date('2026-10-30T12:59:00Z'), 'America/New_York', weekdays9to5)).toBe(false); // 08:59 EDT
    expect(isOpen(new Date('2026-11-02T13:30:00Z'), 'America/New_York', weekdays9to5)).toBe(false); // Mon 08:30 EST
    expect(isOpen(new Date('2026-11-02T14:00:00Z'), 'America/New_York', weekdays9to5)).toBe(true); // Mon 09:00 EST
    expect(isOpen(new Date('2026-11-02T21:59:00Z'), 'America/New_York', weekdays9to5)).toBe(true); // 16:59 EST
    expect(isOpen(new Date('2026-11-02T22:00:00Z'), 'America/New_York', weekdays9to5)).toBe(false); // 17:00 EST
    // Spring forward 2026-03-08: Monday 09:00 EDT is 13:00 UTC.
    expect(nextOpening(new Date('2026-03-07T00:00:00Z'), 'America/New_York', weekdays9to5).toISOString()).toBe('2026-03-09T13:00:00.000Z');
    // Fall back: after Friday's close the next opening is Monday 09:00 EST (14:00 UTC).
    expect(nextOpening(new Date('2026-10-30T21:00:00Z'), 'America/New_York', weekdays9to5).toISOString()).toBe('2026-11-02T14:00:00.000Z');
  });

  it('is in the callee’s own zone, and understands 24:00 and weekends', () => {
    const at = new Date('2026-11-02T08:30:00Z'); // Monday: 08:30 London, 09:30 Berlin, 00:30 Los Angeles
    expect(isOpen(at, 'Europe/London', weekdays9to5)).toBe(false);
    expect(isOpen(at, 'Europe/Berlin', weekdays9to5)).toBe(true);
    expect(nextOpening(at, 'America/Los_Angeles', weekdays9to5).toISOString()).toBe('2026-11-02T17:00:00.000Z');
    const allDay = windowOf({ start: '00:00', end: '24:00' }, ['sat']);
    expect(isOpen(new Date('2026-11-07T23:59:00Z'), 'UTC', allDay)).toBe(true);
    expect(isOpen(new Date('2026-11-08T00:00:00Z'), 'UTC', allDay)).toBe(false);
  });
});

describe('retry policy', () => {
  const policy = policyOf({ max_attempts: 3, max_attempts_per_day: 2, retry_interval_minutes: 60, retry_on: ['no_answer', 'busy'] }, 1);
  const window = windowOf({ start: '00:00', end: '24:00' }, ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
  const now = new Date('2026-11-02T10:00:00Z');
  const first = new Date('2026-11-02T09:00:00Z');

  it('retries a retryable outcome after the interval, and stops at the limits', () => {
    expect(decide('human', { attempts: 1, attemptsToday: 1, sameOutcome: 1, firstAttemptAt: first }, policy, now, 'UTC', window)).toEqual({
      outcome: 'reached',
    });
    expect(
      decide('no_answer', { attempts: 1, attemptsToday: 1, sameOutcome: 1, firstAttemptAt: first }, policy, now, 'UTC', window),
    ).toEqual({
      retryAt: new Date('2026-11-02T11:00:00Z'),
      readyAt: new Date('2026-11-02T11:00:00Z'),
    });
    expect(decide('failed', { attempts: 1, attemptsToday: 1, sameOutcome: 1, firstAttemptAt: first }, policy, now, 'UTC', window)).toEqual({
      outcome: 'not_reached',
    });
    expect(decide('busy', { attempts: 3, attemptsToday: 1, sameOutcome: 3, firstAttemptAt: first }, policy, now, 'UTC', window)).toEqual({
      outcome: 'not_reached',
    });
  });

  it('moves to the next day when today’s attempts are used, within max_retry_days', () => {
    const next = decide('busy', { attempts: 2, attemptsToday: 2, sameOutcome: 2, firstAttemptAt: first }, policy, now, 'UTC', window);
    expect(next).toEqual({ retryAt: new Date('2026-11-03T00:00:00Z'), readyAt: new Date('2026-11-03T00:00:00Z') });
    const sameDayOnly = policyOf({ max_attempts: 5, max_attempts_per_day: 2, retry_on: ['busy'] }, 0);
    expect(
      decide('busy', { attempts: 2, attemptsToday: 2, sameOutcome: 2, firstAttemptAt: first }, sameDayOnly, now, 'UTC', window),
    ).toEqual({
      outcome: 'not_reached',
    });
  });

  it('keeps apart when the policy allows a retry and when the calling window lets it happen', () => {
    const mornings = windowOf({ start: '09:00', end: '10:00' }, ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
    expect(
      decide('no_answer', { attempts: 1, attemptsToday: 1, sameOutcome: 1, firstAttemptAt: first }, policy, now, 'UTC', mornings),
    ).toEqual({
      retryAt: new Date('2026-11-03T09:00:00Z'),
      readyAt: new Date('2026-11-02T11:00:00Z'),
    });
  });
});

// The app (a database of its own) is set up under the hook's time limit, and the test runs the dialer
// four times over: on a loaded machine either alone can take most of the default limit.
describe('a campaign outside its window', { timeout: 120_000 }, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('waits overnight instead of failing, and calls each contact in its own morning', async () => {
    // Tuesday 2026-11-03, 02:00 UTC: evening in Los Angeles and New York, night in London.
    const clock = new ManualClock(new Date('2026-11-03T02:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 5 }));
    const { telephony } = dialer;
    const setup = await runningCampaign(app, env, {
      rows: [
        { Phone: '+14155550123', 'Time Zone': 'America/Los_Angeles' },
        { Phone: '+442079460958', 'Time Zone': 'Europe/London' },
        { Phone: '+12125550199' },
      ],
      campaign: {
        timezone: 'America/New_York',
        callingHours: { start: '09:00', end: '17:00' },
        activeDays: ['mon', 'tue', 'wed', 'thu', 'fri'],
      },
    });
    await dialer.run(setup.campaignId);
    expect(telephony.placed).toEqual([]);
    expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } })).status).toBe('running');

    for (const hour of ['2026-11-03T09:00:00Z', '2026-11-03T14:00:00Z', '2026-11-03T17:00:00Z']) {
      clock.set(hour);
      await dialer.run(setup.campaignId);
    }
    const at = Object.fromEntries(telephony.placed.map((c) => [c.to, c.at.toISOString()]));
    expect(at).toEqual({
      '+442079460958': '2026-11-03T09:00:00.000Z', // 09:00 in London
      '+12125550199': '2026-11-03T14:00:00.000Z', // 09:00 in New York, the campaign's zone
      '+14155550123': '2026-11-03T17:00:00.000Z', // 09:00 in Los Angeles
    });
    expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } })).status).toBe('completed');
  });
});
