import { describe, expect, it } from 'vitest';
import { uuidv7 } from '../src/services/ids.js';

describe('uuidv7', () => {
  it('makes version 7 ids that carry the time and sort in the order they were made', () => {
    const before = Date.now();
    const ids = Array.from({ length: 10_000 }, () => uuidv7());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    const ms = parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now());
  });
});
