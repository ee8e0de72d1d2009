import type { Logger } from 'pino';
import type { Sql } from '../db/sql.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { DialerControl } from './dialer/control.js';
import type { EventBus } from './events.js';
import type { OffsetMemory } from './offset-pages.js';
import type { Settings } from './settings.js';
import type { VoiceControl } from './voice/control.js';

export interface Principal {
  /** The token's `sub`: the customer's user id. */
  id: string;
  isAdmin: boolean;
  /** Set when the caller presented an API key rather than a token. */
  apiKey?: { id: string; scope: 'read' | 'full' };
  /** Set when the caller presented a token: its `exp`, past which nothing opened with it may go on. */
  tokenExpiresAt?: Date;
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
  /** Agents' provisioning at the voice provider, where this process runs it. */
  voice: VoiceControl;
  /** Where this process's v1 pages at deep offsets ended, to continue from; without it every such page skips from the top. */
  offsets?: OffsetMemory | undefined;
}

/** What every service call receives; it knows nothing of HTTP or GraphQL. */
export interface ServiceContext extends ServiceEnv {
  user: Principal;
  /** The id of the request this call serves, handed on to background work it starts. */
  requestId?: string | undefined;
}

/**
 * A caller's context on `env`. Its logger stamps the user's id on the lines of `logs.log`: the
 * environment's logger unless given, as a request's scope, whose logger stamps the request id. Both are
 * made on first use.
 */
export function serviceContext(env: ServiceEnv, user: Principal, requestId?: string, logs: { readonly log: Logger } = env): ServiceContext {
  return new CallerContext(env, user, requestId, logs);
}

/**
 * A class, so that every context has one shape: built as an object literal (the environment spread, then
 * the caller's fields) a context cost microseconds on every request. Its logger lives on the prototype,
 * so spreading a context would drop it: pass the context itself.
 */
class CallerContext implements ServiceContext {
  readonly db: PrismaClient;
  readonly sql: Sql;
  readonly clock: Clock;
  readonly settings: Settings;
  readonly dialer: DialerControl;
  readonly events: EventBus;
  readonly voice: VoiceControl;
  readonly offsets: OffsetMemory | undefined;
  #log: Logger | undefined;

  constructor(
    env: ServiceEnv,
    readonly user: Principal,
    readonly requestId: string | undefined,
    private readonly logs: { readonly log: Logger },
  ) {
    ({
      db: this.db,
      sql: this.sql,
      clock: this.clock,
      settings: this.settings,
      dialer: this.dialer,
      events: this.events,
      voice: this.voice,
      offsets: this.offsets,
    } = env);
  }

  /** Made on first use: few calls log, and a child of the request's child logger costs more than a small v1 read's routing. */
  get log(): Logger {
    return (this.#log ??= this.logs.log.child({ userId: this.user.id }));
  }
}
