import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { workerModule } from '../worker-module.js';
import type { PhoneBatch } from './phone-worker.js';

// Reading a number with libphonenumber's "max" metadata costs some 10 µs: the 100,000 numbers of a big
// import would hold the event loop for a second. Worker threads read them instead, while the main
// thread prepares and writes other rows. The threads start with the first batch and end after a while
// idle, so a server that imports nothing keeps none.

const IDLE_MS = 30_000;

let pool: Piscina<PhoneBatch, (string | null)[]> | undefined;

/** Each number in E.164, or null where it is not a valid phone number: `toE164` of each, off the event loop. */
export function toE164Batch(numbers: string[], country: string): Promise<(string | null)[]> {
  pool ??= new Piscina({
    ...workerModule('./phone-worker', import.meta.url),
    minThreads: 0,
    maxThreads: Math.max(1, availableParallelism() - 1),
    idleTimeout: IDLE_MS,
    // Reading numbers makes short-lived garbage only: a young generation of 8 MB (V8 lets one grow to 48
    // MB) holds a batch's, and keeps the thread some 20 MB smaller and no slower.
    resourceLimits: { maxYoungGenerationSizeMb: 8 },
  });
  return pool.run({ numbers, country });
}

/** Ends the worker threads (on shutdown); a later batch starts new ones. */
export async function closePhoneWorkers(): Promise<void> {
  const closing = pool;
  pool = undefined;
  await closing?.destroy();
}
