import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { createEventBus } from '../src/ops/event-bus.js';
import { inProcessEventBus, type CampaignEvent, type EventBus } from '../src/services/events.js';
import { waitFor } from './support/wait.js';

// The event bus's two transports: in this process, and Redis pub/sub (at REDIS_TEST_URL,
// 127.0.0.1:6379 by default) between processes.

const REDIS_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';
const silent = createLogger('silent');

/** Collects what a listener receives and resolves waits on it. */
function recorder() {
  const received: CampaignEvent[] = [];
  const waiters = new Set<() => void>();
  return {
    received,
    listener: (event: CampaignEvent) => {
      received.push(event);
      for (const waiter of waiters) waiter();
    },
    /** Resolves once `count` events have arrived. */
    until: (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (received.length < count) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      }),
  };
}

const campaign = (campaignId: string): CampaignEvent => ({ kind: 'campaign', campaignId });

describe('in this process', () => {
  it('delivers a campaign’s events to its listeners only, until they stop', async () => {
    const bus = inProcessEventBus(silent);
    const [x, y] = [randomUUID(), randomUUID()];
    const first = recorder();
    const second = recorder();
    const stopFirst = await bus.listen(x, first.listener);
    await bus.listen(x, second.listener);
    const attempts: CampaignEvent = { kind: 'attempts', campaignId: x, attemptIds: [randomUUID()] };
    bus.publish(attempts);
    bus.publish(campaign(y));
    stopFirst();
    bus.publish(campaign(x));
    expect(first.received).toEqual([attempts]);
    expect(second.received).toEqual([attempts, campaign(x)]);
  });

  it('keeps a failing listener from reaching the publisher or the other listeners', async () => {
    const bus = inProcessEventBus(silent);
    const id = randomUUID();
    const other = recorder();
    await bus.listen(id, () => {
      throw new Error('listener bug');
    });
    await bus.listen(id, other.listener);
    expect(() => bus.publish(campaign(id))).not.toThrow();
    expect(other.received).toEqual([campaign(id)]);
  });
});

describe('through Redis', () => {
  const prefix = `callflow-test-${randomUUID()}`;
  const buses: EventBus[] = [];
  let raw: Redis;
  const bus = () => {
    const created = createEventBus({ redisUrl: REDIS_URL, prefix, log: silent });
    buses.push(created);
    return created;
  };
  const channel = (campaignId: string, of = prefix) => `${of}:events:campaign:${campaignId}`;
  beforeAll(() => {
    raw = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    raw.disconnect();
  });

  it('carries a campaign’s events from one process’s bus to another’s listeners', async () => {
    const [publisher, subscriber] = [bus(), bus()];
    const [x, y] = [randomUUID(), randomUUID()];
    const heard = recorder();
    await subscriber.listen(x, heard.listener);
    const attempts: CampaignEvent = { kind: 'attempts', campaignId: x, attemptIds: [randomUUID(), randomUUID()] };
    publisher.publish(campaign(y));
    publisher.publish(attempts);
    publisher.publish(campaign(x));
    await heard.until(2);
    expect(heard.received).toEqual([attempts, campaign(x)]);
  });

  it('is listening once listen() resolves, on channels named with its prefix', async () => {
    const id = randomUUID();
    const stop = await bus().listen(id, () => {});
    // PUBLISH answers how many subscribers it reached.
    expect(await raw.publish(channel(id), JSON.stringify(campaign(id)))).toBe(1);
    expect(await raw.publish(channel(id, `${prefix}-other`), JSON.stringify(campaign(id)))).toBe(0);
    stop();
    await expect.poll(() => raw.publish(channel(id), JSON.stringify(campaign(id)))).toBe(0);
  });

  it('shares one subscription among a process’s listeners, and drops a stopped one', async () => {
    const subscriber = bus();
    const id = randomUUID();
    const first = recorder();
    const second = recorder();
    const stopFirst = await subscriber.listen(id, first.listener);
    await subscriber.listen(id, second.listener);
    expect(await raw.publish(channel(id), JSON.stringify(campaign(id)))).toBe(1);
    await Promise.all([first.until(1), second.until(1)]);
    stopFirst();
    await raw.publish(channel(id), JSON.stringify(campaign(id)));
    await second.until(2);
    expect(first.received).toHaveLength(1);
  });

  it('ignores messages that are not events', async () => {
    const id = randomUUID();
    const heard = recorder();
    await bus().listen(id, heard.listener);
    await raw.publish(channel(id), 'not json');
    await raw.publish(channel(id), JSON.stringify({ kind: 'attempts', campaignId: id }));
    await raw.publish(channel(id), JSON.stringify(campaign(randomUUID())));
    await raw.publish(channel(id), JSON.stringify(campaign(id)));
    await heard.until(1);
    expect(heard.received).toEqual([campaign(id)]);
  });
});

describe('while Redis is unreachable', () => {
  it('publishes without throwing and logs the failure once, and refuses to listen', async () => {
    const lines: string[] = [];
    const log = createLogger('warn', { write: (line: string) => void lines.push(line) });
    const bus = createEventBus({ redisUrl: 'redis://127.0.0.1:1', prefix: 'callflow-test', log });
    try {
      for (let i = 0; i < 5; i += 1) expect(() => bus.publish(campaign(randomUUID()))).not.toThrow();
      await expect.poll(() => lines.filter((line) => line.includes('could not publish')).length, { timeout: 20_000 }).toBe(1);
      await expect(bus.listen(randomUUID(), () => {})).rejects.toThrow();
    } finally {
      await bus.close();
    }
  }, 30_000);
});

/** A port nobody listens on now. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

describe('when Redis comes back', () => {
  // A Redis server of the test's own, so that stopping it disturbs no other test.
  let port: number;
  let server: ChildProcess | undefined;
  const startRedis = async () => {
    server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
    await waitFor(async () => {
      const probe = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG' || undefined;
      } catch {
        return undefined;
      } finally {
        probe.disconnect();
      }
    }, 10_000);
  };
  const stopRedis = async () => {
    const stopping = once(server!, 'exit');
    server!.kill('SIGKILL');
    await stopping;
  };
  beforeAll(async () => {
    port = await freePort();
    await startRedis();
  });
  afterAll(async () => {
    if (server && server.exitCode === null && server.signalCode === null) await stopRedis();
  });

  it('tells every campaign listened to that it changed, since what was published meanwhile may be lost', async () => {
    const url = `redis://127.0.0.1:${port}`;
    const [publisher, subscriber] = [
      createEventBus({ redisUrl: url, prefix: 'callflow-test', log: silent }),
      createEventBus({ redisUrl: url, prefix: 'callflow-test', log: silent }),
    ];
    try {
      const [x, y] = [randomUUID(), randomUUID()];
      const [heardX, heardY] = [recorder(), recorder()];
      await subscriber.listen(x, heardX.listener);
      await subscriber.listen(y, heardY.listener);
      await stopRedis();
      // Published while Redis is away: lost, or sent once the publisher is back; either way not all a
      // subscriber may rely on.
      publisher.publish({ kind: 'attempts', campaignId: x, attemptIds: [randomUUID()] });
      await startRedis();
      // Nothing here publishes a campaign change: one that arrives is the re-read after resubscribing.
      await waitFor(
        async () => (heardX.received.some((e) => e.kind === 'campaign') && heardY.received.some((e) => e.kind === 'campaign')) || undefined,
        10_000,
        'a change of each campaign',
      );
      expect(heardX.received.filter((e) => e.kind === 'campaign')[0]).toEqual(campaign(x));
      expect(heardY.received.filter((e) => e.kind === 'campaign')[0]).toEqual(campaign(y));
      // Subscribed again: what is published now arrives as before (once the publisher is back too).
      const attempts: CampaignEvent = { kind: 'attempts', campaignId: x, attemptIds: [randomUUID()] };
      const arrived = () => heardX.received.some((e) => e.kind === 'attempts' && e.attemptIds[0] === attempts.attemptIds[0]);
      await expect
        .poll(
          () => {
            publisher.publish(attempts);
            return arrived();
          },
          { timeout: 10_000, interval: 200 },
        )
        .toBe(true);
    } finally {
      await Promise.all([publisher.close(), subscriber.close()]);
    }
  }, 30_000);
});
