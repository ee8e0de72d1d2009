import { readScheduleConfig, RETRYABLE_OUTCOMES, type RetryableOutcome } from './schedule.js';
import { statusOf, type CallOutcome } from '../call-outcomes.js';
import { daysBetween, localDate, nextOpening, type CallingWindow } from './window.js';

// What one finished call means for its contact, under the campaign's retry policy (its schedule_config,
// read with its defaults by calling-rules/schedule.ts).

/** How many times a contact is tried again after an outcome, and how soon. */
export interface RetryBudget {
  maxRetries: number;
  retryAfterMinutes: number;
}

export interface RetryPolicy {
  maxAttempts: number;
  maxAttemptsPerDay: number;
  budgets: Record<RetryableOutcome, RetryBudget>;
  /** Days after the first attempt a contact may still be retried; 0 = the first day only. */
  maxRetryDays: number;
}

/**
 * An outcome without a budget of its own is retried as the statuses in `retry_on` always were: up to
 * max_attempts, retry_interval_minutes apart, when its status is listed. A voicemail hung up on under
 * the `hang_up` policy is never retried.
 */
export function policyOf(scheduleConfig: unknown, maxRetryDays: number): RetryPolicy {
  const config = readScheduleConfig(scheduleConfig);
  const budgets = Object.fromEntries(
    RETRYABLE_OUTCOMES.map((outcome) => {
      const own = config.retry_budgets?.[outcome];
      const listed = (config.retry_on as readonly string[]).includes(statusOf(outcome));
      const hangUp = outcome === 'voicemail' && config.voicemail?.action === 'hang_up';
      return [
        outcome,
        {
          maxRetries: hangUp ? 0 : (own?.max_retries ?? (listed ? config.max_attempts - 1 : 0)),
          retryAfterMinutes: own?.retry_after_minutes ?? config.retry_interval_minutes,
        },
      ];
    }),
  ) as Record<RetryableOutcome, RetryBudget>;
  return { maxAttempts: config.max_attempts, maxAttemptsPerDay: config.max_attempts_per_day, budgets, maxRetryDays };
}

export interface AttemptHistory {
  /** Attempts made so far, this one included. */
  attempts: number;
  /** Attempts made on the local day of this one, this one included. */
  attemptsToday: number;
  /** Of the attempts so far, how many met this one's outcome, this one included. */
  sameOutcome: number;
  firstAttemptAt: Date;
}

/**
 * `retryAt`: when the next attempt is due; `readyAt`: when the retry policy allows it, before the calling
 * window is applied (a later change of the window plans the contact again from there).
 */
export type Decision = { retryAt: Date; readyAt: Date } | { outcome: 'reached' | 'not_reached' };

const isRetryable = (outcome: CallOutcome): outcome is RetryableOutcome => (RETRYABLE_OUTCOMES as readonly string[]).includes(outcome);

/**
 * After a finished call: a person reached is done; an outcome with retries left in its budget is tried
 * again after its wait (on the next day when today's attempts are used up), inside the calling window, as
 * long as attempts remain and the next try falls within max_retry_days of the first; otherwise not reached.
 */
export function decide(
  outcome: CallOutcome,
  history: AttemptHistory,
  policy: RetryPolicy,
  now: Date,
  zone: string,
  window: CallingWindow,
): Decision {
  if (outcome === 'human') return { outcome: 'reached' };
  const budget = isRetryable(outcome) ? policy.budgets[outcome] : null;
  if (!budget || history.sameOutcome > budget.maxRetries || history.attempts >= policy.maxAttempts) return { outcome: 'not_reached' };
  let next = new Date(now.getTime() + budget.retryAfterMinutes * 60_000);
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
