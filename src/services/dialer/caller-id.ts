import type { CallOutcome } from '../../generated/prisma/client.js';
import { placeOfNumber } from '../calling-rules/places.js';

// Which of an agent's numbers a call goes out from: the one that best matches the callee (same area
// code, else same region), else the least used; never one at a limit (calls per hour and per day), cooling
// down after a run of unanswered calls, or resting after its answer rate fell. No database, no clock:
// the dialer reads each number's recent calls under the numbers' locks, and asks these.
//
// The cool-down counts the calls in flight as if they will go unanswered, so that a burst cannot run past
// it. For a number whose cooldownAfterUnanswered is N, s is how many of its finished calls, newest placed
// first, went unanswered before the latest that was answered, and k how many of its calls are in flight,
// both counting only calls placed since its last cool-down ended. It places a call only while s + k < N,
// so no run of unanswered calls (in the order they were placed) is ever longer than N. When s reaches N
// with nothing in flight, it places none for cooldownMinutes after the last of those results; its first
// call after that starts a new run, and the calls before no longer count.

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
  /** Outcomes of its latest finished calls placed since its last cool-down ended, newest placed first: up to cooldownAfterUnanswered of them... */
  latestOutcomes: CallOutcome[];
  /** ...when the last of them ended... */
  lastEndedAt: Date | null;
  /** ...and how many of its calls placed since then are in flight. */
  inFlight: number;
  /** Outcomes of its finished calls since its last rest, newest first: up to restWindowCalls of them. */
  windowOutcomes: CallOutcome[];
  /** Set when the tick counts a call that starts a new run after a cool-down: the store records when. */
  cooldownEnded?: boolean;
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

/** Where the number stands in its run of unanswered calls (see the top of this file). */
type Run =
  /** s + k < N: it may call. */
  | { kind: 'open' }
  /** Its calls in flight could complete the run: nothing until their results come. */
  | { kind: 'awaiting_results' }
  /** The run is complete: the next call, once the cool-down is over, starts a new one. */
  | { kind: 'complete'; cooledAt: number };

function runOf(n: PoolNumber): Run {
  const length = n.cooldownAfterUnanswered;
  if (length === null) return { kind: 'open' };
  const answered = n.latestOutcomes.findIndex((o) => !UNANSWERED.has(o));
  const unanswered = answered === -1 ? n.latestOutcomes.length : answered;
  if (unanswered + n.inFlight < length) return { kind: 'open' };
  if (n.inFlight > 0 || !n.lastEndedAt) return { kind: 'awaiting_results' };
  return { kind: 'complete', cooledAt: n.lastEndedAt.getTime() + n.cooldownMinutes * 60_000 };
}

/**
 * When each of the number's limits lets it call again, in epoch milliseconds: `now` for one that does not
 * hold it back. `awaitingResults`: its calls in flight could complete a run of unanswered calls, so it
 * places none before their results, whenever those come.
 */
export function limitsOf(n: PoolNumber, now: Date): { rest: number; caps: number; cooldown: number; awaitingResults: boolean } {
  const rest = n.restedUntil && n.restedUntil > now ? n.restedUntil.getTime() : now.getTime();
  const caps = Math.max(
    capFreesAt(n.hourCalls, n.maxCallsPerHour, HOUR, now).getTime(),
    capFreesAt(n.dayCalls, n.maxCallsPerDay, DAY, now).getTime(),
  );
  const run = runOf(n);
  const cooldown = run.kind === 'complete' ? Math.max(now.getTime(), run.cooledAt) : now.getTime();
  return { rest, caps, cooldown, awaitingResults: run.kind === 'awaiting_results' };
}

/** The first moment the number may place a call: now when it may; null when it waits for the results of its calls in flight. */
export function availableAt(n: PoolNumber, now: Date): Date | null {
  const { rest, caps, cooldown, awaitingResults } = limitsOf(n, now);
  return awaitingResults ? null : new Date(Math.max(rest, caps, cooldown));
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
  const open = pool.filter((n) => {
    const at = availableAt(n, now);
    return at !== null && at.getTime() <= now.getTime();
  });
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

/**
 * Counts a call placed from the number now (one pickCallerId chose), so that the rest of the tick sees
 * it: in flight, it joins the run of unanswered calls, or starts a new one after a cool-down.
 */
export function countCall(n: PoolNumber, now: Date): void {
  n.hourCalls.unshift(now);
  n.dayCalls.unshift(now);
  n.hourCount += 1;
  n.dayCount += 1;
  if (runOf(n).kind === 'complete') {
    n.latestOutcomes = [];
    n.lastEndedAt = null;
    n.cooldownEnded = true;
  }
  n.inFlight += 1;
}

/** When the first number of the pool may place a call again; null when those that may wait for the results of their calls in flight. */
export function poolOpensAt(pool: PoolNumber[], now: Date): Date | null {
  const times = pool.flatMap((n) => availableAt(n, now)?.getTime() ?? []);
  return times.length ? new Date(Math.min(...times)) : null;
}
