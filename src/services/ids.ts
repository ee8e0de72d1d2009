import { randomFillSync } from 'node:crypto';

// UUIDv7 ids for rows we insert in bulk: time-ordered, so a file's rows keep their order and the primary
// key index grows at its end. Random bits come from a pooled buffer: one crypto call per 4,096 ids
// instead of one per id, which mattered at 100,000 rows.

const POOL_IDS = 4096;
const pool = Buffer.alloc(POOL_IDS * 8);
let poolOffset = pool.length;
let lastMs = 0;
let sequence = 0;

function randomBytes8(): Buffer {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += 8;
  return pool.subarray(poolOffset - 8, poolOffset);
}

export function uuidv7(): string {
  let ms = Date.now();
  if (ms > lastMs) {
    lastMs = ms;
    sequence = 0;
  } else {
    // Same (or an earlier) millisecond: count up in the 12 sequence bits, borrowing the next millisecond.
    sequence += 1;
    if (sequence > 0xfff) {
      lastMs += 1;
      sequence = 0;
    }
    ms = lastMs;
  }
  const random = randomBytes8();
  const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
  const variant = ((random[0]! & 0x3f) | 0x80).toString(16) + random.subarray(1, 2).toString('hex');
  return [
    hex(Math.floor(ms / 0x10000), 8),
    hex(ms & 0xffff, 4),
    hex(0x7000 | sequence, 4),
    variant,
    random.subarray(2, 8).toString('hex'),
  ].join('-');
}
