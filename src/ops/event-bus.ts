import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { z } from 'zod';
import { CampaignListeners, inProcessEventBus, type CampaignEvent, type EventBus } from '../services/events.js';

export interface EventBusOptions {
  /** Carries events between processes through Redis pub/sub; without it they stay in this process. */
  redisUrl?: string | undefined;
  /** Start of every channel name, so that deployments (or test runs) sharing one Redis do not hear each other. */
  prefix: string;
  log: Logger;
}

export function createEventBus(options: EventBusOptions): EventBus {
  return options.redisUrl ? redisEventBus(options.redisUrl, `${options.prefix}:events`, options.log) : inProcessEventBus(options.log);
}

const message = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('campaign'), campaignId: z.string() }),
  z.object({ kind: z.literal('attempts'), campaignId: z.string(), attemptIds: z.array(z.string()) }),
]);

/**
 * One channel per campaign. Written on ioredis rather than with @graphql-yoga/redis-event-target, which
 * leaves a failed PUBLISH as an unhandled rejection (fatal in Node) and does not tell a listener when
 * its SUBSCRIBE has been acknowledged; here `listen` resolves only then, so a subscriber that has read
 * the current state misses no later change. Subscribing needs a connection of its own, opened at the
 * first `listen` (a dialer worker only publishes).
 */
function redisEventBus(url: string, prefix: string, log: Logger): EventBus {
  const channelOf = (campaignId: string) => `${prefix}:campaign:${campaignId}`;
  const listeners = new CampaignListeners(log);
  // The SUBSCRIBE of each campaign listened to, shared by its listeners in this process.
  const subscribed = new Map<string, Promise<unknown>>();
  const publisher = connect(url, log, 'publish');
  let subscriber: Redis | undefined;
  const subscriberConnection = () => {
    if (subscriber) return subscriber;
    const connection = connect(url, log, 'subscribe');
    subscriber = connection;
    connection.on('message', (channel: string, text: string) => {
      const event = parse(text);
      if (event && channel === channelOf(event.campaignId)) listeners.deliver(event);
      else log.warn({ channel }, 'live updates: ignored a malformed message');
    });
    // Events published while the connection was down are lost (or come late). Once ioredis has
    // subscribed again (its SUBSCRIBEs go out as the connection becomes ready; a PING answered after
    // them), every campaign listened to gets a change of its own, so each subscription reads the
    // campaign as it is now.
    let connectedBefore = false;
    connection.on('ready', () => {
      if (!connectedBefore) {
        connectedBefore = true;
        return;
      }
      setImmediate(() =>
        connection.ping().then(
          () => listeners.campaigns().forEach((campaignId) => listeners.deliver({ kind: 'campaign', campaignId })),
          () => undefined,
        ),
      );
    });
    return connection;
  };

  let publishing = true;
  return {
    publish(event) {
      publisher.publish(channelOf(event.campaignId), JSON.stringify(event)).then(
        () => (publishing = true),
        (err: unknown) => {
          // Once per outage: a running campaign publishes hundreds of events a second.
          if (publishing) log.warn({ err }, 'live updates: could not publish to Redis; subscribers miss updates meanwhile');
          publishing = false;
        },
      );
    },
    async listen(campaignId, listener) {
      if (listeners.add(campaignId, listener)) subscribed.set(campaignId, subscriberConnection().subscribe(channelOf(campaignId)));
      let listening = true;
      const stop = () => {
        if (!listening) return;
        listening = false;
        if (!listeners.remove(campaignId, listener)) return;
        subscribed.delete(campaignId);
        subscriber
          ?.unsubscribe(channelOf(campaignId))
          .catch((err: unknown) => log.warn({ err, campaignId }, 'live updates: UNSUBSCRIBE failed'));
      };
      try {
        await subscribed.get(campaignId);
      } catch (error) {
        stop();
        throw error;
      }
      return stop;
    },
    async close() {
      await Promise.all([publisher, subscriber].map((connection) => connection?.quit().catch(() => connection.disconnect())));
    },
  };
}

function parse(text: string): CampaignEvent | undefined {
  try {
    const parsed = message.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function connect(url: string, log: Logger, role: 'publish' | 'subscribe'): Redis {
  // While Redis is away, a command fails after one reconnection attempt instead of queueing without bound.
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  // ioredis reports every failed reconnection attempt; one warning per outage is enough.
  let reachable = true;
  redis.on('ready', () => {
    if (!reachable) log.info({ role }, 'live updates: Redis is reachable again');
    reachable = true;
  });
  redis.on('error', (err) => {
    if (reachable) log.warn({ err, role }, 'live updates: Redis is unreachable');
    reachable = false;
  });
  return redis;
}
