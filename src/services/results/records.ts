import { createHmac, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { SqlSession } from '../../db/sql.js';
import type { ServiceContext } from '../context.js';
import { INSTANT_RANGE_MESSAGE, isStorableInstant } from '../input-safety.js';
import { parseInput, type RawInput } from '../validation.js';
import { INVALID_PHONE_MESSAGE, toE164 } from '../phone.js';
import * as store from './store.js';

// Call records, as the Telemarketing Sales Rule asks a seller to keep them (16 CFR 310.5: five years):
// every attempt's numbers, times, duration, disposition, the caller ID it went out from, the consents it
// relied on and the calling rules' version it passed, recorded when the call is placed. Erasing the
// person keeps the record: the number dialed is replaced by a keyed hash of it (HMAC-SHA-256 under the
// signing key `call-record-pseudonyms`), so an auditor who holds a number can still find its calls, and
// nobody can read the number back from the record.

export const RECORD_RETENTION_YEARS = 5;
const PSEUDONYM_KEY = 'call-record-pseudonyms';

/** The pseudonym of an E.164 number: HMAC-SHA-256 under the key, as lowercase hex. */
export function pseudonymOf(key: Buffer, e164: string): string {
  return createHmac('sha256', key).update(e164).digest('hex');
}

/** The pseudonymisation key, read (made the first time) in the caller's session: an erasure's transaction. */
export function pseudonymKey(session: SqlSession): Promise<Buffer> {
  return store.signingKey(session, PSEUDONYM_KEY, randomBytes(32));
}

/** The columns of the records export, in order (docs/compliance-rules.md, "Call records"). */
export const CALL_RECORD_COLUMNS = [
  'attempt_id',
  'campaign_id',
  'contact_id',
  'attempt_number',
  'from_number',
  'to_number',
  'to_number_hash',
  'placed_at',
  'started_at',
  'ended_at',
  'duration_seconds',
  'status',
  'outcome',
  'disconnect_reason',
  'cost_cents',
  'consents_relied',
  'rules_version',
] as const;
export type CallRecordRow = Record<(typeof CALL_RECORD_COLUMNS)[number], unknown>;

const e164 = z
  .string()
  .max(64)
  .transform((value, ctx) => toE164(value) ?? (ctx.addIssue({ code: 'custom', message: INVALID_PHONE_MESSAGE }), z.NEVER));

const instant = z.coerce.date().refine(isStorableInstant, INSTANT_RANGE_MESSAGE);

export const callRecordsInput = z
  .object({
    /** Placed at or after. */
    from: instant,
    /** Placed before. */
    to: instant,
    /** Only the calls to this number, erased or not (matched by its pseudonym once erased). */
    phone_number: e164.optional(),
  })
  .refine((input) => input.from <= input.to, { path: ['to'], error: 'Must not be earlier than from.' });
export type CallRecordsFilter = z.output<typeof callRecordsInput>;

export function readCallRecordsFilter(raw: RawInput<typeof callRecordsInput>): CallRecordsFilter {
  return parseInput(callRecordsInput, raw);
}

/** How many records an export reads at a time. */
const BATCH = 1_000;

/** The caller's call records placed in [from, to), oldest first, in batches read one after the other. */
export async function* callRecordBatches(ctx: ServiceContext, filter: CallRecordsFilter): AsyncGenerator<CallRecordRow[]> {
  const number = filter.phone_number
    ? { plain: filter.phone_number, hash: pseudonymOf(await pseudonymKey(ctx.sql), filter.phone_number) }
    : null;
  let after: { createdAt: Date; id: string } | null = null;
  for (;;) {
    const rows: store.CallRecord[] = await store.callRecords(ctx.sql, ctx.user.id, filter, number, after, BATCH);
    if (rows.length > 0) yield rows.map(recordRow);
    if (rows.length < BATCH) return;
    const last = rows.at(-1)!;
    after = { createdAt: last.placedAt, id: last.attemptId };
  }
}

function recordRow(r: store.CallRecord): CallRecordRow {
  return {
    attempt_id: r.attemptId,
    campaign_id: r.campaignId,
    contact_id: r.contactId,
    attempt_number: r.attemptNumber,
    from_number: r.fromNumber,
    to_number: r.toNumber,
    to_number_hash: r.toNumberHash,
    placed_at: r.placedAt,
    started_at: r.startedAt,
    ended_at: r.endedAt,
    duration_seconds: r.durationSeconds,
    status: r.status,
    outcome: r.outcome,
    disconnect_reason: r.disconnectReason,
    cost_cents: r.costCents,
    // id:kind pairs, `;`-separated (one cell, read without a JSON parser); `none` when it relied on none, empty when not recorded.
    consents_relied: r.consentsRelied === null ? null : r.consentsRelied.map((c) => `${c.id}:${c.kind}`).join(';') || 'none',
    rules_version: r.rulesVersion,
  };
}
