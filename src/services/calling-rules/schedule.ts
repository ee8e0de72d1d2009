import { z } from 'zod';
import { describedAs, int64 } from '../validation.js';

// When and how often a campaign calls: calling hours, active days and the retry policy, kept in the
// campaign's JSON columns in the canonical form these schemas produce. This module is the one home of
// their defaults and readers: the read* functions give the dialer and both API surfaces the effective
// values of any stored row, and the input descriptions (GraphQL and OpenAPI) are written from the same
// constants.

/** Defaults of a campaign's plain columns. */
export const CAMPAIGN_DEFAULTS = { concurrent_calls: 1, max_retry_days: 0, timezone: 'UTC' } as const;

/** A whole number within a business range, from JSON, a bigint or form text; never rounded. */
export const intInRange = (min: number, max: number) =>
  describedAs(int64.pipe(z.bigint().min(BigInt(min)).max(BigInt(max))).transform(Number), {
    type: 'integer',
    minimum: min,
    maximum: max,
  });

const START = /^(?:[01]\d|2[0-3]):[0-5]\d$/;
const END = /^(?:(?:[01]\d|2[0-3]):[0-5]\d|24:00)$/;

export const DEFAULT_CALLING_HOURS = { start: '09:00', end: '17:00' };

/** Local time in the campaign's (or the callee's) zone; overnight windows are not supported. */
export const callingHours = z
  .object({
    start: z.string().regex(START, { error: 'Use HH:MM (24-hour clock), from 00:00 to 23:59.' }),
    end: z.string().regex(END, { error: 'Use HH:MM (24-hour clock), from 00:00 to 24:00.' }),
  })
  // Compared only once both are well-formed, so a bad time gets one message.
  .refine((hours) => !(START.test(hours.start) && END.test(hours.end)) || hours.start < hours.end, {
    path: ['end'],
    error: 'Must be later than start.',
  });
export type CallingHours = z.output<typeof callingHours>;

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
const DAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
export const DEFAULT_ACTIVE_DAYS: Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri'];

const capitalized = (day: Weekday) => `${DAY_NAMES[WEEKDAYS.indexOf(day)]![0]!.toUpperCase()}${DAY_NAMES[WEEKDAYS.indexOf(day)]!.slice(1)}`;

/** "Monday to Friday" for a run of days, "Monday, Wednesday" otherwise. */
export function describeDays(days: readonly Weekday[]): string {
  const indexes = days.map((day) => WEEKDAYS.indexOf(day));
  const run = indexes.every((index, i) => i === 0 || index === indexes[i - 1]! + 1);
  return run && days.length > 2 ? `${capitalized(days[0]!)} to ${capitalized(days.at(-1)!)}` : days.map(capitalized).join(', ');
}

const DAY_MESSAGE = 'Use a day name (mon or monday, any case) or an ISO day number from 1 (Monday) to 7 (Sunday).';

/** `Monday`, `mon`, 1 and "1" are all Monday. */
const weekday = z.union([z.string(), z.number()], { error: DAY_MESSAGE }).transform((value, ctx) => {
  const text = String(value).trim().toLowerCase();
  const index = /^[1-7]$/.test(text) ? Number(text) - 1 : DAY_NAMES.findIndex((name) => name === text || name.slice(0, 3) === text);
  if (index < 0) {
    ctx.addIssue({ code: 'custom', message: DAY_MESSAGE });
    return z.NEVER;
  }
  return WEEKDAYS[index]!;
});

/** Stored in week order without duplicates. */
export const activeDays = z
  .array(weekday)
  .min(1)
  .transform((days) => WEEKDAYS.filter((day) => days.includes(day)));

/** Call statuses after which a contact is tried again. */
export const RETRYABLE_STATUSES = ['no_answer', 'busy', 'failed', 'voicemail'] as const;

/** Call outcomes that may be tried again; a person reached or a number not in service never are. */
export const RETRYABLE_OUTCOMES = ['no_answer', 'busy', 'voicemail', 'ivr', 'call_screening', 'failed'] as const;
export type RetryableOutcome = (typeof RETRYABLE_OUTCOMES)[number];

/** What a call that meets voicemail does: hang up (the contact is done), leave the message, or hang up and retry. */
export const VOICEMAIL_ACTIONS = ['hang_up', 'leave_message', 'retry_later'] as const;

/** `{{first_name}}` and the other contact fields the agent's prompt gets; an unknown name renders as nothing. */
export const VOICEMAIL_MESSAGE_MAX = 1_000;

const voicemailPolicy = z
  .object({
    action: z.enum(VOICEMAIL_ACTIONS).default('retry_later'),
    message: z.string().trim().min(1).max(VOICEMAIL_MESSAGE_MAX).optional(),
  })
  .refine((policy) => policy.action !== 'leave_message' || policy.message !== undefined, {
    path: ['message'],
    error: 'A message is required to leave one.',
  });

/** How often, and how soon, a contact is tried again after one outcome; each default comes from the policy's own. */
const retryBudget = z.object({
  /** Tries again after this outcome, counted over the contact's attempts in the campaign; 0: never. */
  max_retries: intInRange(0, 9).optional(),
  retry_after_minutes: intInRange(1, 10_080).optional(),
});

export const DEFAULT_SCHEDULE_CONFIG = {
  max_attempts: 3,
  max_attempts_per_day: 2,
  retry_interval_minutes: 60,
  retry_on: [...RETRYABLE_STATUSES],
};

export const SCHEDULE_CONFIG_DESCRIPTION =
  `The retry policy; a field left out gets its default (${DEFAULT_SCHEDULE_CONFIG.max_attempts} attempts, ` +
  `${DEFAULT_SCHEDULE_CONFIG.max_attempts_per_day} a day, ${DEFAULT_SCHEDULE_CONFIG.retry_interval_minutes} minutes apart, ` +
  `after every retryable status).`;

/** The retry policy; missing keys get the defaults. `max_attempts_per_day` never exceeds `max_attempts`. */
export const scheduleConfig = z
  .object({
    max_attempts: intInRange(1, 10).default(DEFAULT_SCHEDULE_CONFIG.max_attempts),
    max_attempts_per_day: intInRange(1, 10).optional(),
    retry_interval_minutes: intInRange(1, 10_080).default(DEFAULT_SCHEDULE_CONFIG.retry_interval_minutes),
    retry_on: z
      .array(z.enum(RETRYABLE_STATUSES))
      .transform((statuses) => RETRYABLE_STATUSES.filter((status) => statuses.includes(status)))
      .default(() => [...RETRYABLE_STATUSES]),
    retry_budgets: z.partialRecord(z.enum(RETRYABLE_OUTCOMES), retryBudget).optional(),
    voicemail: voicemailPolicy.optional(),
  })
  .transform((config, ctx) => {
    const perDay = config.max_attempts_per_day ?? Math.min(DEFAULT_SCHEDULE_CONFIG.max_attempts_per_day, config.max_attempts);
    if (perDay > config.max_attempts) {
      ctx.addIssue({ code: 'custom', path: ['max_attempts_per_day'], message: 'Must not be more than max_attempts.' });
      return z.NEVER;
    }
    return {
      max_attempts: config.max_attempts,
      max_attempts_per_day: perDay,
      retry_interval_minutes: config.retry_interval_minutes,
      retry_on: config.retry_on,
      // Kept only when given: a stored policy without them reads as it always did.
      ...(config.retry_budgets ? { retry_budgets: config.retry_budgets } : {}),
      ...(config.voicemail ? { voicemail: config.voicemail } : {}),
    };
  });
export type ScheduleConfig = z.output<typeof scheduleConfig>;

/** The effective value of one of these JSON columns, from its stored value or from its JSON text. */
export interface ColumnReader<T> {
  (stored: unknown): T;
  /**
   * From the column's JSON text, as a statement that builds its rows as JSON can give it: a text seen
   * before is neither parsed nor printed again (on a list of campaigns, printing each row's three values
   * to look them up cost more than the rest of its v1 shape).
   */
  fromText(text: string): T;
  /** The effective value's JSON text, from the column's JSON text: what a statement that builds v1's JSON text leaves to node. */
  jsonFromText(text: string): string;
}

/**
 * Reads a JSON column with its schema, falling back to the default. Every list and page of campaigns
 * reads these three per row, and a user has few distinct values, so results (frozen, as they are shared)
 * and their printed text are remembered by the stored JSON text in small tables that start over when full.
 */
function columnReader<T>(schema: z.ZodType<T>, fallback: () => T): ColumnReader<T> {
  const seen = new Map<string, T>();
  const read = (key: string, stored: unknown) => {
    let value = seen.get(key);
    if (value === undefined) {
      const parsed = schema.safeParse(stored);
      value = deepFreeze(parsed.success ? parsed.data : fallback());
      if (seen.size >= 1_000) seen.clear();
      seen.set(key, value);
    }
    return value;
  };
  const printed = new Map<string, string>();
  const fromText = (text: string) => seen.get(text) ?? read(text, JSON.parse(text));
  return Object.assign((stored: unknown) => read(JSON.stringify(stored ?? null), stored), {
    fromText,
    jsonFromText: (text: string) => {
      let json = printed.get(text);
      if (json === undefined) {
        json = JSON.stringify(fromText(text));
        if (printed.size >= 1_000) printed.clear();
        printed.set(text, json);
      }
      return json;
    },
  });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}

export const readCallingHours: ColumnReader<CallingHours> = columnReader(callingHours, () => ({ ...DEFAULT_CALLING_HOURS }));

export const readActiveDays: ColumnReader<Weekday[]> = columnReader(activeDays, () => [...DEFAULT_ACTIVE_DAYS]);

export const readScheduleConfig: ColumnReader<ScheduleConfig> = columnReader(
  z.preprocess((stored) => stored ?? {}, scheduleConfig),
  () => scheduleConfig.parse({}),
);
