import { afterAll, describe, expect, it } from 'vitest';
import { closePhoneWorkers, toE164Batch } from '../src/services/phone-pool.js';
import { toE164 } from '../src/services/phone.js';

// The phone pool reads numbers in worker threads exactly as toE164 does, leaving the event loop free.

afterAll(() => closePhoneWorkers());

const NUMBERS = ['(415) 555-2671', '+44 20 7946 0958', '020 7946 0958', '12345', '', 'not a number', '415.555.2671 x12', '+1 212 555 0143'];

describe('the phone pool', () => {
  it('reads each number as toE164 does: E.164, or null for an invalid one', async () => {
    for (const country of ['US', 'GB']) {
      expect(await toE164Batch(NUMBERS, country)).toEqual(NUMBERS.map((n) => toE164(n, country)));
    }
    expect(await toE164Batch(['12345', '(415) 555-2671'], 'US')).toEqual([null, '+14155552671']);
  });

  it('reads off the event loop', async () => {
    const numbers = Array.from({ length: 30_000 }, (_, i) => `(415) 555-${String(i % 10_000).padStart(4, '0')}`);
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 5);
    const read = await toE164Batch(numbers, 'US');
    clearInterval(timer);
    expect(read).toHaveLength(numbers.length);
    expect(read[0]).toBe('+14155550000');
    // Read on this thread, the batch would have held every tick back until it was done.
    expect(ticks).toBeGreaterThan(3);
  });

  it('rejects a batch its worker fails on, and reads the next one', async () => {
    await expect(toE164Batch([null as unknown as string], 'US')).rejects.toThrow();
    expect(await toE164Batch(['(415) 555-2671'], 'US')).toEqual(['+14155552671']);
  });

  it('starts again after being closed', async () => {
    await closePhoneWorkers();
    expect(await toE164Batch(['12345'], 'US')).toEqual([null]);
  });
});
