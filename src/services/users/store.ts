import { named } from '../../db/prisma-names.js';
import { statement, type SqlSession, type SqlTransaction } from '../../db/sql.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';

// The users domain's one door to the database: the user rows that tokens name.

type Db = PrismaClient | Prisma.TransactionClient;

/**
 * Creates the user row unless it exists; true when this call created it. INSERT ... ON CONFLICT DO
 * NOTHING: parallel first requests of a new user all succeed, where an upsert (a read, then an insert)
 * let all but one fail on the primary key.
 */
export async function insertUserIfMissing(sql: SqlSession, id: string): Promise<boolean> {
  return (await sql.run(insertIfMissing, [id])).length === 1;
}

const insertIfMissing = statement<{ id: string }>(
  'users.insertIfMissing',
  'INSERT INTO users (id) VALUES ($1::uuid) ON CONFLICT (id) DO NOTHING RETURNING id',
);

/** The ISO country a user's numbers written without a country code belong to. */
export async function defaultCountryOf(db: Db, id: string): Promise<string> {
  const user = await named('users.defaultCountry', () => db.user.findUniqueOrThrow({ where: { id }, select: { defaultCountry: true } }));
  return user.defaultCountry;
}

export function userExists(db: Db, id: string): Promise<boolean> {
  return named('users.exists', () => db.user.findUnique({ where: { id }, select: { id: true } })).then(Boolean);
}

const lockUserStatement = statement('users.lock', 'SELECT id FROM users WHERE id = $1::uuid FOR NO KEY UPDATE');

/**
 * Locks the user's row until the transaction ends, so that a rule over all of a user's rows of some kind
 * (a most-there-may-be count) is checked and kept by one transaction at a time, whichever process runs
 * it. NO KEY: rows that refer to the user (KEY SHARE) are still written meanwhile.
 */
export async function lockUser(tx: SqlTransaction, id: string): Promise<void> {
  await tx.run(lockUserStatement, [id]);
}

/** How long the user's calls keep the person's data, in days; null: the record's five years. */
export async function callDataRetentionOf(db: Db, id: string): Promise<number | null> {
  const user = await named('users.callDataRetention', () => db.user.findUnique({ where: { id }, select: { callDataRetentionDays: true } }));
  return user?.callDataRetentionDays ?? null;
}

export async function setCallDataRetention(db: Db, id: string, days: number | null): Promise<void> {
  await named('users.setCallDataRetention', () =>
    db.user.upsert({ where: { id }, create: { id, callDataRetentionDays: days }, update: { callDataRetentionDays: days } }),
  );
}

/** The users with a retention setting, with where their pseudonymisation stands. */
export function usersWithCallDataRetention(
  db: Db,
): Promise<{ id: string; callDataRetentionDays: number | null; callsPseudonymisedBefore: Date | null }[]> {
  return named('users.withCallDataRetention', () =>
    db.user.findMany({
      where: { callDataRetentionDays: { not: null } },
      select: { id: true, callDataRetentionDays: true, callsPseudonymisedBefore: true },
    }),
  );
}

/** Records that the user's calls placed before `before` are pseudonymised. */
export async function markCallsPseudonymisedBefore(db: Db, id: string, before: Date): Promise<void> {
  await named('users.markCallsPseudonymised', () => db.user.update({ where: { id }, data: { callsPseudonymisedBefore: before } }));
}

const createdAt = statement<{ at: Date }>('users.createdAt', 'SELECT created_at AS at FROM users WHERE id = $1::uuid');

const setCreatedAt = statement('users.setCreatedAt', 'UPDATE users SET created_at = $2::timestamptz WHERE id = $1::uuid');

/** When a user was created; null for none. */
export async function userCreatedAt(sql: SqlSession, id: string): Promise<Date | null> {
  return (await sql.run(createdAt, [id]))[0]?.at ?? null;
}

/** Dates a user's creation (the demo's seeding, src/demo/redate.ts). */
export async function setUserCreatedAt(sql: SqlSession, id: string, at: Date): Promise<void> {
  await sql.run(setCreatedAt, [id, at]);
}
