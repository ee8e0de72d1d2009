import { z } from 'zod';
import type { SqlSession } from '../../db/sql.js';
import type { ServiceContext } from '../context.js';
import { defaultCountryOf } from '../users/store.js';
import { ConflictError, ValidationError } from '../errors.js';
import { INVALID_PHONE_MESSAGE, toE164 } from '../phone.js';
import { parseInput, type RawInput } from '../validation.js';
import { found } from '../errors.js';
import { ownedOrNotFound } from '../owned.js';
import { getCallAttempt } from '../results/calls.js';
import { emitEvents } from '../webhooks/emit.js';
import * as store from './store.js';

// The user's do-not-call list: a number on it is `do_not_call` in every group and is never dialed.
// A contact is `do_not_call` exactly when its number is on the list, so the two are changed together.

export type DoNotCallQuery = store.DoNotCallQuery;

export function listDoNotCall<Q extends DoNotCallQuery & store.DoNotCallPage = {}>(ctx: ServiceContext, query: Q = {} as Q) {
  return store.findDoNotCall(ctx.db, ctx.user.id, query);
}

export function countDoNotCall(ctx: ServiceContext): Promise<number> {
  return store.countDoNotCall(ctx.db, ctx.user.id);
}

/** One of the user's entries, as a surface selects it. */
export function getDoNotCallEntry<Q extends DoNotCallQuery = {}>(ctx: ServiceContext, id: string, query: Q = {} as Q) {
  return ownedOrNotFound('DoNotCallEntry', id, (id) => store.findDoNotCallEntry(ctx.db, ctx.user.id, id, query));
}

export function isOnDoNotCallList(sql: SqlSession, userId: string, phoneNumber: string): Promise<boolean> {
  return store.isListed(sql, userId, phoneNumber);
}

const entryInput = z.object({
  phone_number: z.string().trim().min(1).max(32),
  reason: z.string().max(1000).default(''),
});

async function numberOf(ctx: ServiceContext, raw: string): Promise<string> {
  const number = toE164(raw, await defaultCountryOf(ctx.db, ctx.user.id));
  if (!number) throw ValidationError.field('phone_number', INVALID_PHONE_MESSAGE);
  return number;
}

/** Puts a number on the list (again: no change) and marks its contacts `do_not_call` in every group. */
export async function addDoNotCall(ctx: ServiceContext, raw: RawInput<typeof entryInput>): Promise<store.DoNotCallEntry> {
  const input = parseInput(entryInput, raw);
  const phoneNumber = await numberOf(ctx, input.phone_number);
  return ctx.sql.transaction((tx) => putOnList(tx, ctx.user.id, phoneNumber, input.reason, 'manual'));
}

/** Adds the entry and marks the number's contacts, inside the caller's transaction. */
export async function putOnList(
  tx: SqlSession,
  userId: string,
  phoneNumber: string,
  reason: string,
  source: 'manual' | 'call' | 'contact',
) {
  const entry = await store.insertDoNotCallEntry(tx, { userId, phoneNumber, reason, source });
  await store.setNumberStatus(tx, userId, phoneNumber, 'active', 'do_not_call');
  return entry;
}

export interface ListedNumber {
  userId: string;
  phoneNumber: string;
}

/**
 * putOnList for many numbers in two steps, for the dialer: the entries inside its transaction (the
 * dialer skips listed numbers from then on), then their contacts (markListed) after it committed, so
 * that marking, which may wait for contact rows a tick holds, happens while the dialer holds no lock.
 */
export async function addToList(tx: SqlSession, numbers: ListedNumber[], reason: string, source: 'call'): Promise<void> {
  if (numbers.length === 0) return;
  await store.insertListedNumbers(tx, numbers, reason, source);
}

/** Marks the active contacts of listed numbers `do_not_call`, in every group. */
export async function markListed(sql: SqlSession, numbers: ListedNumber[]): Promise<void> {
  if (numbers.length === 0) return;
  await store.markListedContacts(sql, numbers);
}

/** Takes a number off the list; its contacts become callable again. */
export async function removeDoNotCall(ctx: ServiceContext, raw: { phone_number?: unknown }): Promise<store.DoNotCallEntry> {
  const { phone_number: given } = parseInput(entryInput.pick({ phone_number: true }), raw);
  const phoneNumber = await numberOf(ctx, given);
  const entry = await ctx.sql.transaction((tx) => takeOffList(tx, ctx.user.id, phoneNumber));
  return found(entry, 'DoNotCallEntry');
}

/** Removes the entry (if any) and makes the number's contacts callable again, inside the caller's transaction. */
export async function takeOffList(tx: SqlSession, userId: string, phoneNumber: string): Promise<store.DoNotCallEntry | undefined> {
  const entry = await store.deleteDoNotCallEntry(tx, userId, phoneNumber);
  await store.setNumberStatus(tx, userId, phoneNumber, 'do_not_call', 'active');
  return entry;
}

const listInput = z.object({
  name: z.string().trim().min(1).max(100),
  numbers: z.array(z.string().max(32)).min(1),
});

/** What importing an outside do-not-call list did. */
export interface ListImport {
  /** Numbers put on the list. */
  listed: number;
  /** Numbers that were on it already (from any source), left as they are. */
  alreadyListed: number;
  /** Entries that are not phone numbers. */
  invalid: number;
}

/**
 * Puts the numbers of an outside do-not-call list (a national or state registry extract, a partner's
 * suppression file) on the user's list, source `registry` and the list's name as the reason, and marks
 * their contacts `do_not_call` in every group: no campaign of the user dials them from then on.
 */
export async function importDoNotCallList(ctx: ServiceContext, raw: RawInput<typeof listInput>): Promise<ListImport> {
  const input = parseInput(listInput, raw);
  if (input.numbers.length > ctx.settings.importMaxRows) {
    throw ValidationError.field('numbers', `Ensure this list has no more than ${ctx.settings.importMaxRows} numbers.`);
  }
  const country = await defaultCountryOf(ctx.db, ctx.user.id);
  const numbers = new Set<string>();
  let invalid = 0;
  for (const given of input.numbers) {
    const number = toE164(given, country);
    if (number) numbers.add(number);
    else invalid += 1;
  }
  const listed = await ctx.sql.transaction(async (tx) => {
    const added = await store.insertRegistryNumbers(tx, ctx.user.id, [...numbers], `On the list "${input.name}"`);
    await store.markListedContacts(
      tx,
      added.map((phoneNumber) => ({ userId: ctx.user.id, phoneNumber })),
    );
    return added.length;
  });
  return { listed, alreadyListed: numbers.size - listed, invalid };
}

/**
 * An opt-out said during one of the user's calls, reported by whoever heard it (the agent runtime, for a
 * provider that reports none, such as Twilio): the number goes on the list at once, as if the provider
 * had reported it, and the customer's webhooks hear of it. Reporting it again changes nothing more.
 */
export async function reportOptOut(ctx: ServiceContext, callAttemptId: string): Promise<store.DoNotCallEntry> {
  const call = await getCallAttempt(ctx, callAttemptId, { select: { id: true, toNumber: true, contactId: true, campaignId: true } });
  // An erased person's call keeps no number: there is nothing left to list.
  if (!call.toNumber) throw new ConflictError('The contact of this call was erased.', 'contact_erased');
  const phoneNumber = call.toNumber;
  return ctx.sql.transaction(async (tx) => {
    const entry = await putOnList(tx, ctx.user.id, phoneNumber, 'Asked during a call', 'call');
    await emitEvents(tx, [
      {
        type: 'contact.opted_out',
        userId: ctx.user.id,
        data: { phone_number: phoneNumber, contact_id: call.contactId, campaign_id: call.campaignId, call_id: call.id },
      },
    ]);
    return entry;
  });
}
