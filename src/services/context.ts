import type { Logger } from 'pino';
import type { PrismaClient } from '../generated/prisma/client.js';

export interface Principal {
  /** The token's `sub`: the customer's user id. */
  id: string;
  isAdmin: boolean;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** What every service call receives; it knows nothing of HTTP or GraphQL. */
export interface ServiceContext {
  user: Principal;
  db: PrismaClient;
  clock: Clock;
  log: Logger;
}
