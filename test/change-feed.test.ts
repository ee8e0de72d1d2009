import { describe, expect, it } from 'vitest';
import { ChangeFeed } from '../src/services/change-feed.js';

// How one subscriber's changes are coalesced: each id read once per batch, a batch at most once per interval.

const INTERVAL_MS = 200;
const take = async (feed: ChangeFeed, count: number) => {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push((await feed.next()).value as string);
  return ids;
};

describe('ChangeFeed', () => {
  it('hands out the first batch at once, and the next one no sooner than an interval later', async () => {
    const feed = new ChangeFeed(INTERVAL_MS);
    feed.add(['a']);
    expect(await take(feed, 1)).toEqual(['a']);
    const firstBatch = performance.now();
    feed.add(['b']);
    expect(await take(feed, 1)).toEqual(['b']);
    // Timers may fire a millisecond early against performance.now().
    expect(performance.now() - firstBatch).toBeGreaterThanOrEqual(INTERVAL_MS - 5);
    await feed.return();
  });

  it('hands a batch out whole, each id once, in the order it first changed', async () => {
    // An interval no test waits for: whatever is handed out here came without waiting for one.
    const feed = new ChangeFeed(60_000);
    feed.add(['a', 'b', 'a']);
    feed.add(['c', 'b']);
    expect(await take(feed, 3)).toEqual(['a', 'b', 'c']);
    feed.add(['d']);
    const next = feed.next();
    const pending = Symbol('pending');
    expect(await Promise.race([next, new Promise((resolve) => setTimeout(resolve, 50, pending))])).toBe(pending);
    await feed.return();
    expect(await next).toEqual({ done: true, value: undefined });
  });

  it('reads again an id that changes after it was handed out', async () => {
    const feed = new ChangeFeed(0);
    feed.add(['a', 'b']);
    expect(await take(feed, 1)).toEqual(['a']);
    // a changed again while being read; b is still to be handed out, so it is not queued twice.
    feed.add(['a', 'b']);
    expect(await take(feed, 2)).toEqual(['b', 'a']);
    await feed.return();
  });

  it('ends a waiting next() at once when the consumer leaves, and stops listening once', async () => {
    const feed = new ChangeFeed(INTERVAL_MS);
    let closed = 0;
    feed.onClose(() => (closed += 1));
    const waiting = feed.next();
    await feed.return();
    await feed.return();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(await feed.next()).toEqual({ done: true, value: undefined });
    expect(closed).toBe(1);
  });
});
