import type { Logger } from 'pino';
import type { Sql } from '../db/sql.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { DialerControl } from './dialer/control.js';
import type { EventBus } from './events.js';
import type { Settings } from './settings.js';

export interface Principal {
  /** The token's `sub`: the customer's user id. */
  id: string;
  isAdmin: boolean;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** What the service layer runs on, the same for every caller. */
export interface ServiceEnv {
  db: PrismaClient;
  /** The same database in plain SQL, for the hot paths Prisma's cost per statement would slow (the dialer). */
  sql: Sql;
  clock: Clock;
  log: Logger;
  settings: Settings;
  dialer: DialerControl;
  /** Where changes are announced for live updates (GraphQL subscriptions). */
  events: EventBus;
}

/** What every service call receives; it knows nothing of HTTP or GraphQL. */
export interface ServiceContext extends ServiceEnv {
  user: Principal;
  /** The id of the request this call serves, handed on to background work it starts. */
  requestId?: string | undefined;
}

export function serviceContext(env: ServiceEnv, user: Principal, requestId?: string): ServiceContext {
  return { ...env, user, requestId, log: env.log.child({ userId: user.id }) };
}
