import type { ServiceContext } from '../context.js';
import { availableAt, type PoolNumber } from './caller-id.js';
import { readNumber } from './store/caller-id.js';

// What a caller ID's limits make of it now, for the customer to read (GraphQL `PhoneNumber.usage`).

export interface CallerIdState {
  state: 'available' | 'at_limit' | 'cooling_down' | 'rested';
  /** Now when it may call. */
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
  const at = availableAt(n, now);
  const resting = n.restedUntil !== null && n.restedUntil > now;
  const cooling = !resting && at > now && at.getTime() === coolingEnd(n);
  const state = at <= now ? 'available' : resting ? 'rested' : cooling ? 'cooling_down' : 'at_limit';
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

/** When a cool-down in progress ends, as availableAt computes it for a number only cooling. */
const coolingEnd = (n: PoolNumber) => (n.lastEndedAt ? n.lastEndedAt.getTime() + n.cooldownMinutes * 60_000 : NaN);
