import type { CallOutcome } from '../../generated/prisma/client.js';
import { placeOfNumber } from '../compliance/places.js';

// Which of an agent's numbers a call goes out from: the one that best matches the callee (same area
// code, else same region), else the least used; never one at a limit (calls per hour and per day), cooling
// down after a run of unanswered calls, or resting after its answer rate fell. No database, no clock:
// the dialer reads each number's recent calls under the numbers' locks, and asks these.

/** One of the agent's numbers, with what its limits need of its recent calls. */
export interface PoolNumber {
  id: string;
  number: string;
  maxCallsPerHour: number | null;
  maxCallsPerDay: number | null;
  cooldownAfterUnanswered: number | null;
  cooldownMinutes: number;
  restBelowAnswerRate: number | null;
  restWindowCalls: number;
  restHours: number;
  restedUntil: Date | null;
  /** Calls it placed in the last hour and day. */
  hourCount: number;
  dayCount: number;
  /** When its latest calls were placed, newest first: up to maxCallsPerHour of the last hour... */
  hourCalls: Date[];
  /** ...and up to maxCallsPerDay of the last day. */
  dayCalls: Date[];
  /** Outcomes of its latest finished calls, newest first: up to ten runs' worth (cooldownAfterUnanswered) of them... */
  latestOutcomes: CallOutcome[];
  /** ...when the latest of them ended... */
  lastEndedAt: Date | null;
  /** ...and, since its last rest, up to restWindowCalls of them. */
  windowOutcomes: CallOutcome[];
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A call the person did not pick up: a run of them cools a number down. */
const UNANSWERED: ReadonlySet<CallOutcome> = new Set(['no_answer', 'busy', 'call_screening', 'failed']);

/** The calls of the window, newest first, still inside it at `now`. */
const within = (calls: Date[], span: number, now: Date) => calls.filter((at) => at.getTime() > now.getTime() - span);

/** When a capped count of calls in a sliding window leaves room again: the oldest call that fills the cap leaves the window. */
function capFreesAt(calls: Date[], cap: number | null, span: number, now: Date): Date {
  if (cap === null) return now;
  const inside = within(calls, span, now);
  if (inside.length < cap) return now;
  return new Date(inside[cap - 1]!.getTime() + span);
}

/** When each of the number's limits lets it call again, in epoch milliseconds: `now` for one that does not hold it back. */
export function limitsOf(n: PoolNumber, now: Date): { rest: number; caps: number; cooldown: number } {
  const rest = n.restedUntil && n.restedUntil > now ? n.restedUntil.getTime() : now.getTime();
  const caps = Math.max(
    capFreesAt(n.hourCalls, n.maxCallsPerHour, HOUR, now).getTime(),
    capFreesAt(n.dayCalls, n.maxCallsPerDay, DAY, now).getTime(),
  );
  // Each full run of unanswered calls cools the number once: the calls after a cool-down start the next run.
  const run = n.cooldownAfterUnanswered;
  const unanswered = n.latestOutcomes.findIndex((o) => !UNANSWERED.has(o));
  const length = unanswered === -1 ? n.latestOutcomes.length : unanswered;
  const cooling = run && n.lastEndedAt && length > 0 && length % run === 0;
  const cooldown = cooling ? Math.max(now.getTime(), n.lastEndedAt!.getTime() + n.cooldownMinutes * 60_000) : now.getTime();
  return { rest, caps, cooldown };
}

/** The first moment the number may place a call: now when it may. */
export function availableAt(n: PoolNumber, now: Date): Date {
  const { rest, caps, cooldown } = limitsOf(n, now);
  return new Date(Math.max(rest, caps, cooldown));
}

/**
 * Whether the number is to be rested now: it has a threshold, its last window of calls since its last rest
 * is full, and fewer of them than the threshold reached a person.
 */
export function needsRest(n: PoolNumber, now: Date): boolean {
  if (n.restBelowAnswerRate === null || (n.restedUntil && n.restedUntil > now)) return false;
  if (n.windowOutcomes.length < n.restWindowCalls) return false;
  const answered = n.windowOutcomes.filter((o) => o === 'human').length;
  return answered / n.windowOutcomes.length < n.restBelowAnswerRate;
}

/** The number's region, for matching callees of the same place; memoised, as a pool is read per tick. */
const regions = new Map<string, string | null>();
function regionOf(number: string): string | null {
  let region = regions.get(number);
  if (region === undefined) {
    region = placeOfNumber(number).region;
    if (regions.size > 10_000) regions.clear();
    regions.set(number, region);
  }
  return region;
}

const areaCode = (number: string) => (number.startsWith('+1') ? number.slice(2, 5) : null);

/**
 * The number a call to `to` goes out from, among those available now: the same area code, else the same
 * region, else the least used today (then this hour, then the lowest id, so the choice is stable). Null when
 * none is available.
 */
export function pickCallerId(pool: PoolNumber[], to: string, now: Date): PoolNumber | null {
  const open = pool.filter((n) => availableAt(n, now).getTime() <= now.getTime());
  if (open.length === 0) return null;
  const code = areaCode(to);
  const region = regionOf(to);
  const rank = (n: PoolNumber) =>
    code !== null && areaCode(n.number) === code ? 0 : region !== null && regionOf(n.number) === region ? 1 : 2;
  return open.reduce((best, n) => {
    const [a, b] = [rank(n), rank(best)];
    if (a !== b) return a < b ? n : best;
    if (n.dayCount !== best.dayCount) return n.dayCount < best.dayCount ? n : best;
    if (n.hourCount !== best.hourCount) return n.hourCount < best.hourCount ? n : best;
    return n.id < best.id ? n : best;
  });
}

/** Counts a call placed from the number now, so that the rest of the tick sees it. */
export function countCall(n: PoolNumber, now: Date): void {
  n.hourCalls.unshift(now);
  n.dayCalls.unshift(now);
  n.hourCount += 1;
  n.dayCount += 1;
}

/** When the first number of the pool may place a call again. */
export function poolOpensAt(pool: PoolNumber[], now: Date): Date {
  return new Date(Math.min(...pool.map((n) => availableAt(n, now).getTime())));
}
