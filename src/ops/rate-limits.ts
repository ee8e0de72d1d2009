import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimitedError } from '../services/errors.js';
import { rateLimitedRequests } from './metrics.js';

/**
 * Tighter budgets that an operation declares on top of the general one: a v1 route with
 * `rateLimit: 'import'`, a GraphQL field with `extensions: rateLimit('import')`.
 */
export type RateLimitBucket = 'import' | 'dispatch';

/** `points` requests per `durationSeconds` for each user; null: no limit. */
export interface RateLimitRule {
  points: number;
  durationSeconds: number;
}

/** `requests` is spent by every authenticated request, the others by the operations that name them. */
export type RateLimitRules = Record<'requests' | RateLimitBucket, RateLimitRule | null>;

export interface RateLimiter {
  /**
   * Spends one request of the general budget, plus one of each bucket named (a name may repeat: one
   * GraphQL request may import twice), for this user. Throws RateLimitedError when a budget is spent.
   */
  consume(userId: string, buckets?: RateLimitBucket[]): Promise<void>;
  /**
   * Gives back one of each bucket named, spent on operations refused for their input (an import whose
   * rows were refused): a customer fixing a file should not run out of imports doing so.
   */
  giveBack(userId: string, buckets: RateLimitBucket[]): Promise<void>;
  close(): Promise<void>;
}

/** The field extension a GraphQL root field declares its bucket with. */
export const rateLimit = (bucket: RateLimitBucket) => ({ rateLimit: bucket });

export interface RateLimiterOptions {
  /** Shares the budgets between processes through Redis; without it each process counts its own. */
  redisUrl?: string | undefined;
  keyPrefix?: string;
  log: Logger;
}

export function createRateLimiter(rules: RateLimitRules, options: RateLimiterOptions): RateLimiter {
  const redis = options.redisUrl ? connectRedis(options.redisUrl, options.log) : undefined;
  const limiters = new Map<string, RateLimiterAbstract>();
  for (const [bucket, rule] of Object.entries(rules)) {
    if (!rule) continue;
    const settings = {
      points: rule.points,
      duration: rule.durationSeconds,
      keyPrefix: `${options.keyPrefix ?? 'callflow:ratelimit'}:${bucket}`,
    };
    // While Redis is unreachable each process counts in memory instead of refusing or failing requests.
    const limiter = redis
      ? new RateLimiterRedis({
          ...settings,
          storeClient: redis,
          rejectIfRedisNotReady: true,
          insuranceLimiter: new RateLimiterMemory(settings),
        })
      : new RateLimiterMemory(settings);
    limiters.set(bucket, limiter);
  }

  return {
    async consume(userId, buckets = []) {
      const points = new Map<string, number>();
      // The named buckets first, so that a refused import does not also spend a general request.
      for (const bucket of [...buckets, 'requests']) points.set(bucket, (points.get(bucket) ?? 0) + 1);
      for (const [bucket, count] of points) {
        const limiter = limiters.get(bucket);
        if (!limiter) continue;
        try {
          await limiter.consume(userId, count);
        } catch (refusal) {
          if (!(refusal instanceof RateLimiterRes)) throw refusal;
          rateLimitedRequests.inc({ bucket });
          throw new RateLimitedError(Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)));
        }
      }
    },
    async giveBack(userId, buckets) {
      for (const bucket of buckets) await limiters.get(bucket)?.reward(userId, 1);
    },
    async close() {
      redis?.disconnect();
    },
  };
}

function connectRedis(url: string, log: Logger): Redis {
  // No offline queue: while disconnected a command fails at once and the memory fallback answers.
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  // ioredis reports every failed reconnection attempt; one warning per outage is enough.
  let reachable = true;
  redis.on('ready', () => {
    if (!reachable) log.info('rate limits: Redis is reachable again');
    reachable = true;
  });
  redis.on('error', (err) => {
    if (reachable) log.warn({ err }, 'rate limits: Redis is unreachable, counting in memory meanwhile');
    reachable = false;
  });
  return redis;
}
