import type { CallStatus } from '../../generated/prisma/client.js';
import { readScheduleConfig } from '../campaigns/schedule.js';
import { daysBetween, localDate, nextOpening, type CallingWindow } from './window.js';

// What one finished call means for its contact, under the campaign's retry policy (its schedule_config,
// read with its defaults by campaigns/schedule.ts).

export interface RetryPolicy {
  maxAttempts: number;
  maxAttemptsPerDay: number;
  retryIntervalMinutes: number;
  retryOn: readonly CallStatus[];
  /** Days after the first attempt a contact may still be retried; 0 = the first day only. */
  maxRetryDays: number;
}

export function policyOf(scheduleConfig: unknown, maxRetryDays: number): RetryPolicy {
  const config = readScheduleConfig(scheduleConfig);
  return {
    maxAttempts: config.max_attempts,
    maxAttemptsPerDay: config.max_attempts_per_day,
    retryIntervalMinutes: config.retry_interval_minutes,
    retryOn: config.retry_on,
    maxRetryDays,
  };
}

export interface AttemptHistory {
  /** Attempts made so far, this one included. */
  attempts: number;
  /** Attempts made on the local day of this one, this one included. */
  attemptsToday: number;
  firstAttemptAt: Date;
}

/**
 * `retryAt`: when the next attempt is due; `readyAt`: when the retry policy allows it, before the calling
 * window is applied (a later change of the window plans the contact again from there).
 */
export type Decision = { retryAt: Date; readyAt: Date } | { outcome: 'reached' | 'not_reached' };

/**
 * After a finished call: a completed call reaches the person; a retryable status is tried again after
 * the interval (on the next day when today's attempts are used up), inside the calling window, as long
 * as attempts remain and the next try falls within max_retry_days of the first; otherwise not reached.
 */
export function decide(
  status: CallStatus,
  history: AttemptHistory,
  policy: RetryPolicy,
  now: Date,
  zone: string,
  window: CallingWindow,
): Decision {
  if (status === 'completed') return { outcome: 'reached' };
  if (!policy.retryOn.includes(status) || history.attempts >= policy.maxAttempts) return { outcome: 'not_reached' };
  let next = new Date(now.getTime() + policy.retryIntervalMinutes * 60_000);
  if (history.attemptsToday >= policy.maxAttemptsPerDay) {
    // Today's tries are used up: the next one waits for a later local day.
    const tomorrow = new Date(now.getTime());
    while (localDate(tomorrow, zone) === localDate(now, zone)) tomorrow.setTime(tomorrow.getTime() + 3_600_000);
    next = next > tomorrow ? next : tomorrow;
  }
  const retryAt = nextOpening(next, zone, window);
  if (daysBetween(localDate(history.firstAttemptAt, zone), localDate(retryAt, zone)) > policy.maxRetryDays) {
    return { outcome: 'not_reached' };
  }
  return { retryAt, readyAt: next };
}
