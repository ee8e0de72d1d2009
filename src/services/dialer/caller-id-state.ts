import type { ServiceContext } from '../context.js';
import { limitsOf, type PoolNumber } from './caller-id.js';
import { readNumber } from './store/caller-id.js';

// What a caller ID's limits make of it now, for the customer to read (GraphQL `PhoneNumber.usage`).

export interface CallerIdState {
  state: 'available' | 'at_limit' | 'cooling_down' | 'awaiting_results' | 'rested';
  /** Now when it may call; when it awaits results, when its other limits would let it once they come. */
  availableAt: Date;
  callsLastHour: number;
  callsLastDay: number;
  /** The share of its latest calls (since its last rest, up to its rest window) that reached a person; null before any, or without a rest threshold. */
  answerRate: number | null;
  windowCalls: number;
}

export async function callerIdState(ctx: ServiceContext, id: string): Promise<CallerIdState | null> {
  const now = ctx.clock.now();
  const n = await readNumber(ctx.sql, ctx.user.id, id, now);
  return n ? stateOf(n, now) : null;
}

function stateOf(n: PoolNumber, now: Date): CallerIdState {
  const limits = limitsOf(n, now);
  const at = new Date(Math.max(limits.rest, limits.caps, limits.cooldown));
  // The limit that holds it longest names its state; a rest names it whatever else holds, and calls in
  // flight that could complete a run hold it until they end, however soon its other limits free.
  const state =
    limits.rest > now.getTime()
      ? 'rested'
      : limits.awaitingResults
        ? 'awaiting_results'
        : at <= now
          ? 'available'
          : limits.cooldown >= limits.caps
            ? 'cooling_down'
            : 'at_limit';
  const answered = n.windowOutcomes.filter((o) => o === 'human').length;
  return {
    state,
    availableAt: at,
    callsLastHour: n.hourCount,
    callsLastDay: n.dayCount,
    answerRate: n.windowOutcomes.length ? answered / n.windowOutcomes.length : null,
    windowCalls: n.windowOutcomes.length,
  };
}
