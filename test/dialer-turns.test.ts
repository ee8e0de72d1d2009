import { describe, expect, it } from 'vitest';
import { TickTurns } from '../src/services/dialer/turns.js';

// The order of a dialer process's ticks: turns by customer, a bounded number at once, never two ticks of
// one campaign at a time. Ticks here are promises the test resolves.

interface Harness {
  turns: TickTurns<string>;
  /** Campaign ids in the order their ticks started. */
  started: string[];
  running: Set<string>;
  maxAtOnce: number;
  errors: string[];
  /** Ends the oldest running tick of the campaign; `again`: it asks for another (it had more to do). */
  finish(campaignId: string, again?: boolean): Promise<void>;
  causes: (string | undefined)[];
}

function harness(atOnce: number, customers: Record<string, string>, failing = new Set<string>()): Harness {
  const pending = new Map<string, (() => void)[]>();
  const h: Harness = {
    started: [],
    running: new Set(),
    maxAtOnce: 0,
    errors: [],
    causes: [],
    turns: new TickTurns<string>({
      atOnce,
      customerOf: (id) => customers[id],
      tick: (id, cause) => {
        expect(h.running.has(id), `${id} ticks twice at once`).toBe(false);
        h.started.push(id);
        h.causes.push(cause);
        h.running.add(id);
        h.maxAtOnce = Math.max(h.maxAtOnce, h.running.size);
        return new Promise<void>((resolve, reject) => {
          const done = () => {
            h.running.delete(id);
            if (failing.has(id)) reject(new Error(`tick of ${id} failed`));
            else resolve();
          };
          pending.set(id, [...(pending.get(id) ?? []), done]);
        });
      },
      onError: (_error, id) => h.errors.push(id),
    }),
    async finish(id, again = false) {
      const done = pending.get(id)?.shift();
      if (!done) throw new Error(`${id} is not ticking`);
      // A tick with more to do asks again before it ends, as the dialer's wake-up does.
      if (again) h.turns.ask(id);
      done();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
  return h;
}

describe('the turns of a dialer process', () => {
  it('keeps a lane open beside a big customer: a small customer ticks at once, never after one of its ticks', async () => {
    const big = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`big-${i}`, 'big customer']));
    const h = harness(4, { ...big, small: 'small customer' });
    for (const id of Object.keys(big)) h.turns.ask(id);
    // Alone, the big customer runs atOnce - 1 ticks.
    expect(h.started).toEqual(['big-0', 'big-1', 'big-2']);
    h.turns.ask('small');
    expect(h.started).toEqual(['big-0', 'big-1', 'big-2', 'small']);

    // With every tick asking for more, the small customer's next tick starts as soon as its last ends.
    for (let round = 0; round < 60; round += 1) {
      const oldest = h.started.find((id) => h.running.has(id))!;
      await h.finish(oldest, true);
      if (oldest === 'small') expect(h.started.at(-1)).toBe('small');
    }
    expect(h.started.filter((id) => id === 'small').length).toBeGreaterThan(10);
    expect(h.maxAtOnce).toBe(4);
  });

  it('lets every waiting customer in before any customer runs a second tick, when lanes are few', async () => {
    const customers: Record<string, string> = {};
    for (const who of ['a', 'b', 'c']) for (let i = 0; i < 5; i += 1) customers[`${who}-${i}`] = who;
    const h = harness(2, customers);
    for (const id of Object.keys(customers)) h.turns.ask(id);
    expect(h.started).toEqual(['a-0', 'b-0']);
    for (let round = 0; round < 12; round += 1)
      await h.finish(
        h.started.find((id) => h.running.has(id))!,
        true,
      );
    // One tick a customer at a time, in turns: a, b, c, a, b, c, ...
    expect(h.started.map((id) => id[0]).join('')).toBe('abcabcabcabcab');
  });

  it('ticks a campaign asked for again while it ticks once more afterwards, never twice at once', async () => {
    const h = harness(4, { a: 'one' });
    h.turns.ask('a', 'first cause');
    h.turns.ask('a', 'second cause');
    h.turns.ask('a');
    expect(h.started).toEqual(['a']);
    await h.finish('a');
    expect(h.started).toEqual(['a', 'a']);
    await h.finish('a');
    expect(h.started).toEqual(['a', 'a']);
    // The first tick carries the cause of the first ask (a dispatch's request id in its logger).
    expect(h.causes).toEqual(['first cause', undefined]);
  });

  it('treats a campaign whose customer is not known yet as a customer of its own', async () => {
    const h = harness(1, { a1: 'A', a2: 'A' });
    h.turns.ask('a1');
    h.turns.ask('a2');
    h.turns.ask('new');
    await h.finish('a1');
    // Not yet served, it goes before customer A's second campaign.
    expect(h.started).toEqual(['a1', 'new']);
    await h.finish('new');
    expect(h.started).toEqual(['a1', 'new', 'a2']);
  });

  it('reports a failed tick and goes on with the others', async () => {
    const h = harness(1, { bad: 'A', good: 'B' }, new Set(['bad']));
    h.turns.ask('bad');
    h.turns.ask('good');
    await h.finish('bad');
    expect(h.errors).toEqual(['bad']);
    expect(h.started).toEqual(['bad', 'good']);
  });

  it('on stop, forgets the waiting campaigns and waits for the ticks under way', async () => {
    const h = harness(1, { a: 'A', b: 'B' });
    h.turns.ask('a');
    h.turns.ask('b');
    expect(h.turns.campaigns().sort()).toEqual(['a', 'b']);
    let stopped = false;
    const stopping = h.turns.stop().then(() => (stopped = true));
    h.turns.ask('c');
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    await h.finish('a', true);
    await stopping;
    expect(h.started).toEqual(['a']);
    expect(h.turns.campaigns()).toEqual([]);
  });
});
