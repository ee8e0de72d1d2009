import { z } from 'zod';
import type { SqlSession } from '../../db/sql.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { uuidv7 } from '../ids.js';
import { INVALID_PHONE_MESSAGE, toE164 } from '../phone.js';
import { parseInput, type RawInput } from '../validation.js';

// The user's do-not-call list: a number on it is `do_not_call` in every group and is never dialed.
// A contact is `do_not_call` exactly when its number is on the list, so the two are changed together.

type Tx = Prisma.TransactionClient | PrismaClient;
export type DoNotCallQuery = { select?: Prisma.DoNotCallEntrySelect };

export function listDoNotCall<Q extends DoNotCallQuery & Pick<Prisma.DoNotCallEntryFindManyArgs, 'take' | 'skip' | 'cursor'> = {}>(
  ctx: ServiceContext,
  query: Q = {} as Q,
) {
  return ctx.db.doNotCallEntry.findMany({
    ...query,
    where: { userId: ctx.user.id },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
}

export function countDoNotCall(ctx: ServiceContext): Promise<number> {
  return ctx.db.doNotCallEntry.count({ where: { userId: ctx.user.id } });
}

/** Every number on the user's list, for checking many numbers at once. */
export async function doNotCallSet(db: Tx, userId: string): Promise<Set<string>> {
  const rows = await db.doNotCallEntry.findMany({ where: { userId }, select: { phoneNumber: true } });
  return new Set(rows.map((r) => r.phoneNumber));
}

export async function isOnDoNotCallList(db: Tx, userId: string, phoneNumber: string): Promise<boolean> {
  return (await db.doNotCallEntry.count({ where: { userId, phoneNumber } })) > 0;
}

const entryInput = z.object({
  phoneNumber: z.string().trim().min(1).max(32),
  reason: z.string().max(1000).default(''),
});

async function numberOf(ctx: ServiceContext, raw: string): Promise<string> {
  const user = await ctx.db.user.findUniqueOrThrow({ where: { id: ctx.user.id }, select: { defaultCountry: true } });
  const number = toE164(raw, user.defaultCountry);
  if (!number) throw ValidationError.field('phoneNumber', INVALID_PHONE_MESSAGE);
  return number;
}

/** Puts a number on the list (again: no change) and marks its contacts `do_not_call` in every group. */
export async function addDoNotCall(ctx: ServiceContext, raw: RawInput<typeof entryInput>) {
  const input = parseInput(entryInput, raw);
  const phoneNumber = await numberOf(ctx, input.phoneNumber);
  return ctx.db.$transaction((tx) => putOnList(tx, ctx.user.id, phoneNumber, input.reason, 'manual'));
}

/** Adds the entry and marks the number's contacts, inside the caller's transaction. */
export async function putOnList(tx: Tx, userId: string, phoneNumber: string, reason: string, source: 'manual' | 'call' | 'contact') {
  const entry = await tx.doNotCallEntry.upsert({
    where: { userId_phoneNumber: { userId, phoneNumber } },
    create: { userId, phoneNumber, reason, source },
    update: {},
  });
  await tx.contact.updateMany({ where: { userId, phoneNumber, status: 'active' }, data: { status: 'do_not_call' } });
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
  await tx.query(
    `INSERT INTO do_not_call_entries (id, user_id, phone_number, source, reason, created_at)
     SELECT n.id, n.user_id, n.phone_number, $4, $5, now() FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS n(id, user_id, phone_number)
     ON CONFLICT (user_id, phone_number) DO NOTHING`,
    [numbers.map(() => uuidv7()), numbers.map((n) => n.userId), numbers.map((n) => n.phoneNumber), source, reason],
  );
}

/** Marks the active contacts of listed numbers `do_not_call`, in every group. */
export async function markListed(sql: SqlSession, numbers: ListedNumber[]): Promise<void> {
  if (numbers.length === 0) return;
  await sql.query(
    `UPDATE contacts c SET status = 'do_not_call', updated_at = now()
     FROM unnest($1::uuid[], $2::text[]) AS n(user_id, phone_number)
     WHERE c.user_id = n.user_id AND c.phone_number = n.phone_number AND c.status = 'active'`,
    [numbers.map((n) => n.userId), numbers.map((n) => n.phoneNumber)],
  );
}

/** Takes a number off the list; its contacts become callable again. */
export async function removeDoNotCall(ctx: ServiceContext, raw: { phoneNumber?: unknown }) {
  const { phoneNumber: given } = parseInput(entryInput.pick({ phoneNumber: true }), raw);
  const phoneNumber = await numberOf(ctx, given);
  const entry = await ctx.db.$transaction((tx) => takeOffList(tx, ctx.user.id, phoneNumber));
  if (!entry) throw new NotFoundError('DoNotCallEntry');
  return entry;
}

/** Removes the entry (if any) and makes the number's contacts callable again, inside the caller's transaction. */
export async function takeOffList(tx: Tx, userId: string, phoneNumber: string) {
  const entry = await tx.doNotCallEntry.findUnique({ where: { userId_phoneNumber: { userId, phoneNumber } } });
  if (entry) await tx.doNotCallEntry.delete({ where: { id: entry.id } });
  await tx.contact.updateMany({ where: { userId, phoneNumber, status: 'do_not_call' }, data: { status: 'active' } });
  return entry;
}
