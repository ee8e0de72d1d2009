import type { SqlSession } from '../../db/sql.js';
import type { Principal, ServiceContext } from '../context.js';
import { setActor } from './store.js';

// Who changes a campaign, for its history (history.ts): the services that act for a caller name the caller
// in their transaction; a change nobody names (the dialer's pauses and completions, the scheduler) is the
// system's.

/** The API key when one authenticated the request, else the token's user. */
export const actorOf = (principal: Principal) => (principal.apiKey ? `api_key:${principal.apiKey.id}` : `user:${principal.id}`);

/** Names the caller as the author of the campaign changes this transaction makes. */
export function actFor(tx: SqlSession, ctx: ServiceContext): Promise<void> {
  return setActor(tx, actorOf(ctx.user));
}
