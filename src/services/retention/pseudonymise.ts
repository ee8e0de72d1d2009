import { z } from 'zod';
import * as contacts from '../contacts/store.js';
import type { ServiceContext, ServiceEnv } from '../context.js';
import { pseudonymKey, pseudonymOf, RECORD_RETENTION_YEARS } from '../results/records.js';
import * as users from '../users/store.js';
import { parseInput, type RawInput } from '../validation.js';

// A customer may keep the person's data of its calls (the number dialed, the words, the recording, the
// analysis) for less than the records' five years. Past the setting, the retention run pseudonymises
// each ended call as an erasure does (the number becomes its keyed hash, the rest goes; the facts stay),
// from where its last run for the customer stopped, a batch per transaction.

export const MAX_CALL_DATA_RETENTION_DAYS = RECORD_RETENTION_YEARS * 365;

export const callDataRetentionInput = z.object({
  /** Days a call keeps the person's data; null: the record's five years. */
  days: z.number().int().min(1).max(MAX_CALL_DATA_RETENTION_DAYS).nullable().default(null),
});

export interface CallDataRetention {
  days: number | null;
}

export async function callDataRetention(ctx: ServiceContext): Promise<CallDataRetention> {
  return { days: await users.callDataRetentionOf(ctx.db, ctx.user.id) };
}

export async function setCallDataRetention(ctx: ServiceContext, raw: RawInput<typeof callDataRetentionInput>): Promise<CallDataRetention> {
  const { days } = parseInput(callDataRetentionInput, raw);
  await users.setCallDataRetention(ctx.db, ctx.user.id, days);
  return { days };
}

const DAY_MS = 86_400_000;

/** Pseudonymises every customer's ended calls placed before its setting's days; how many calls it changed. */
export async function pseudonymiseExpiredCalls(env: ServiceEnv, batch = 1_000): Promise<number> {
  let changed = 0;
  for (const user of await users.usersWithCallDataRetention(env.db)) {
    const before = new Date(env.clock.now().getTime() - user.callDataRetentionDays! * DAY_MS);
    let after = { createdAt: user.callsPseudonymisedBefore ?? new Date(0), id: '00000000-0000-0000-0000-000000000000' };
    while (after.createdAt < before) {
      const calls = await env.sql.transaction(async (tx) => {
        const found = await contacts.endedCallsBetween(tx, user.id, after, before, batch);
        const numbers = [...new Set(found.flatMap((call) => (call.toNumber ? [call.toNumber] : [])))];
        const key = numbers.length ? await pseudonymKey(tx) : undefined;
        const pseudonyms = new Map(numbers.map((n) => [n, pseudonymOf(key!, n)]));
        if (found.length)
          await contacts.pseudonymiseCalls(
            tx,
            found.map((call) => call.id),
            env.clock.now(),
            pseudonyms,
          );
        return found;
      });
      changed += calls.length;
      // After a full batch, the next run would start at its last instant (calls placed then may remain).
      const last = calls.at(-1);
      await users.markCallsPseudonymisedBefore(env.db, user.id, calls.length < batch ? before : last!.createdAt);
      if (calls.length < batch) break;
      after = { createdAt: last!.createdAt, id: last!.id };
    }
  }
  return changed;
}
