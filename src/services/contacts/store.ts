import { named } from '../../db/prisma-names.js';
import { copyText, statement, type SqlSession, type SqlTransaction } from '../../db/sql.js';
import type { CampaignStatus, ContactStatus, Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { uuidv7 } from '../ids.js';
import { IN_FLIGHT_SQL } from '../call-outcomes.js';
import type { ContactData } from './fields.js';

// The contacts domain's one door to the database: every statement its rules send is here, under a
// `contacts.` name. Reads a GraphQL selection shapes go through Prisma (wrapped in `named`); writes, and
// every read inside a transaction, are SQL statements run on `ctx.sql`. The rules (contacts.ts, groups.ts,
// import.ts, erasure.ts, do-not-call.ts, totals.ts) decide; this module only reads and writes.
//
// Some statements change other domains' tables, because removing people and groups is this domain's
// decision: campaigns (a deleted group's campaigns that never started), campaign_contacts, call_attempts
// and appointments (the erasure of a person from the history that names them).

// ---------------------------------------------------------------------------------------------------------
// Groups

export type GroupQuery = { include?: Prisma.ContactGroupInclude; select?: Prisma.ContactGroupSelect };
export type GroupPage = Pick<Prisma.ContactGroupFindManyArgs, 'take' | 'skip' | 'cursor'>;

/** The user's groups that are not archived, newest first. */
/** The user's groups newest first, archived ones left out: the one filter and order every read of the list uses. */
export function groupList(userId: string) {
  return {
    where: { userId, archivedAt: null },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  } satisfies Prisma.ContactGroupFindManyArgs;
}

export function findGroups<Q extends GroupQuery & GroupPage>(db: PrismaClient, userId: string, query: Q) {
  return named('contacts.listGroups', () => db.contactGroup.findMany({ ...query, ...groupList(userId) })) as Promise<
    Prisma.ContactGroupGetPayload<Q>[]
  >;
}

export function countGroups(db: PrismaClient, userId: string): Promise<number> {
  return named('contacts.countGroups', () => db.contactGroup.count({ where: groupList(userId).where }));
}

/** The user's group with this id, unless archived: the one filter every read of one group uses. */
export function groupItem(userId: string, id: string) {
  return { where: { id, userId, archivedAt: null } } satisfies Prisma.ContactGroupFindFirstArgs;
}

export function findGroup<Q extends GroupQuery>(db: PrismaClient, userId: string, id: string, query: Q) {
  return named('contacts.findGroup', () =>
    db.contactGroup.findFirst({ ...query, ...groupItem(userId, id) }),
  ) as Promise<Prisma.ContactGroupGetPayload<Q> | null>;
}

export function updateGroup<Q extends GroupQuery>(
  db: PrismaClient,
  id: string,
  data: { name?: string | undefined; description?: string | undefined },
  query: Q,
) {
  return named('contacts.updateGroup', () => db.contactGroup.update({ ...query, where: { id }, data })) as unknown as Promise<
    Prisma.ContactGroupGetPayload<Q>
  >;
}

const LOCK_GROUP = statement<{ id: string }>('contacts.lockGroup', 'SELECT id FROM contact_groups WHERE id = $1::uuid FOR UPDATE');

/** Locks the group's row for the rest of the transaction; false when there is none. */
export async function lockGroup(tx: SqlSession, id: string): Promise<boolean> {
  return (await tx.run(LOCK_GROUP, [id])).length > 0;
}

const CAMPAIGN_IN_STATES = statement<{ name: string; status: CampaignStatus }>(
  'contacts.groupCampaignInStates',
  'SELECT name, status FROM campaigns WHERE contact_group_id = $1::uuid AND status = ANY($2::"CampaignStatus"[]) LIMIT 1',
);

/** One campaign on the group in one of these states (campaigns table). */
export async function campaignInStates(tx: SqlSession, groupId: string, states: readonly CampaignStatus[]) {
  const [campaign] = await tx.run(CAMPAIGN_IN_STATES, [groupId, states]);
  return campaign;
}

const LIVE_MEMBERS = statement<{ id: string }>(
  'contacts.liveMembers',
  'SELECT id FROM contacts WHERE contact_group_id = $1::uuid AND erased_at IS NULL',
);

/** The ids of the group's contacts not erased yet. */
export async function liveMemberIds(tx: SqlSession, groupId: string): Promise<string[]> {
  return (await tx.run(LIVE_MEMBERS, [groupId])).map((c) => c.id);
}

const DELETE_UNSTARTED_CAMPAIGNS = statement<{ count: number }>(
  'contacts.deleteUnstartedCampaigns',
  `WITH gone AS (
     DELETE FROM campaigns k WHERE k.contact_group_id = $1::uuid
       AND NOT EXISTS (SELECT 1 FROM campaign_contacts WHERE campaign_id = k.id)
       AND NOT EXISTS (SELECT 1 FROM call_attempts WHERE campaign_id = k.id)
       AND NOT EXISTS (SELECT 1 FROM appointments WHERE campaign_id = k.id)
       AND NOT EXISTS (SELECT 1 FROM credit_transactions WHERE campaign_id = k.id)
     RETURNING 1)
   SELECT count(*)::int AS count FROM gone`,
);

/** Deletes the group's campaigns that left no trace (campaigns table); answers how many. */
export async function deleteUnstartedCampaigns(tx: SqlSession, groupId: string): Promise<number> {
  const [row] = await tx.run(DELETE_UNSTARTED_CAMPAIGNS, [groupId]);
  return row!.count;
}

const GROUP_STILL_NAMED = statement<{ kept: boolean }>(
  'contacts.groupStillNamed',
  `SELECT EXISTS (SELECT 1 FROM campaigns WHERE contact_group_id = $1::uuid)
       OR EXISTS (SELECT 1 FROM contacts WHERE contact_group_id = $1::uuid) AS kept`,
);

/** Whether any campaign or contact row (erased ones included) still names the group. */
export async function groupStillNamed(tx: SqlSession, groupId: string): Promise<boolean> {
  const [row] = await tx.run(GROUP_STILL_NAMED, [groupId]);
  return row!.kept;
}

const ARCHIVE_GROUP = statement(
  'contacts.archiveGroup',
  'UPDATE contact_groups SET archived_at = $2, updated_at = now() WHERE id = $1::uuid',
);
const DELETE_GROUP = statement('contacts.deleteGroup', 'DELETE FROM contact_groups WHERE id = $1::uuid');

export async function archiveGroup(tx: SqlSession, id: string, now: Date): Promise<void> {
  await tx.run(ARCHIVE_GROUP, [id, now]);
}

export async function deleteGroupRow(tx: SqlSession, id: string): Promise<void> {
  await tx.run(DELETE_GROUP, [id]);
}

const ADD_TO_GROUP_TOTAL = statement(
  'contacts.addToGroupTotal',
  'UPDATE contact_groups SET total = total + $2, updated_at = now() WHERE id = $1::uuid',
);

/** Adds `by` (negative: takes) to the group's total. */
export async function addToGroupTotal(tx: SqlSession, id: string, by: number): Promise<void> {
  await tx.run(ADD_TO_GROUP_TOTAL, [id, by]);
}

// ---------------------------------------------------------------------------------------------------------
// Contacts

export type ContactQuery = { include?: Prisma.ContactInclude; select?: Prisma.ContactSelect };

/** The user's contact with this id, unless erased. */
/** The user's contact with this id, unless erased: the one filter every read of one contact uses. */
export function contactItem(userId: string, id: string) {
  return { where: { id, userId, erasedAt: null } } satisfies Prisma.ContactFindFirstArgs;
}

export function findContact<Q extends ContactQuery>(db: PrismaClient, userId: string, id: string, query: Q) {
  return named('contacts.findContact', () =>
    db.contact.findFirst({ ...query, ...contactItem(userId, id) }),
  ) as Promise<Prisma.ContactGetPayload<Q> | null>;
}

/** What a contact keeps beside its number: the data and the columns derived from it. */
export interface ContactFields {
  data: ContactData;
  name: string;
  timezone: string | null;
}

const CONTACT_BY_NUMBER = statement<{ id: string; data: unknown }>(
  'contacts.contactByNumber',
  'SELECT id, data FROM contacts WHERE contact_group_id = $1::uuid AND phone_number = $2',
);

/** The group's contact with this number (erased contacts have none). */
export async function contactByNumber(tx: SqlSession, groupId: string, phoneNumber: string) {
  const [contact] = await tx.run(CONTACT_BY_NUMBER, [groupId, phoneNumber]);
  return contact;
}

const INSERT_CONTACT = statement<{ id: string }>(
  'contacts.insertContact',
  `INSERT INTO contacts (id, user_id, contact_group_id, phone_number, status, data, name, timezone, created_at, updated_at)
   VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5::"ContactStatus", $6::jsonb, $7, $8, now(), now())`,
);

/** Adds one contact; answers its id. */
export async function insertContact(
  tx: SqlSession,
  contact: ContactFields & { userId: string; groupId: string; phoneNumber: string; status: ContactStatus },
): Promise<string> {
  const id = uuidv7();
  const { userId, groupId, phoneNumber, status, data, name, timezone } = contact;
  await tx.run(INSERT_CONTACT, [id, userId, groupId, phoneNumber, status, JSON.stringify(data), name, timezone]);
  return id;
}

// Only while the contact is still in the group it was read in and not erased: a change committed since
// (waited for, then seen) leaves it alone, so that an erased person's data is not written back and a
// contact moved twice at once changes the totals once.
const REWRITE_CONTACT = statement<{ id: string }>(
  'contacts.rewriteContact',
  `UPDATE contacts SET data = $2::jsonb, name = $3, timezone = $4, status = $5::"ContactStatus", contact_group_id = $6::uuid,
     updated_at = now()
   WHERE id = $1::uuid AND contact_group_id = $7::uuid AND erased_at IS NULL RETURNING id`,
);

/** Sets a contact's data, status and group (from `fromGroupId`); false when it is gone from that group or erased. */
export async function rewriteContact(
  tx: SqlSession,
  id: string,
  fromGroupId: string,
  contact: ContactFields & { status: ContactStatus; groupId: string },
): Promise<boolean> {
  const { data, name, timezone, status, groupId } = contact;
  return (await tx.run(REWRITE_CONTACT, [id, JSON.stringify(data), name, timezone, status, groupId, fromGroupId])).length > 0;
}

const WRITE_CONTACT_DATA = statement<{ id: string }>(
  'contacts.writeContactData',
  'UPDATE contacts SET data = $2::jsonb, name = $3, timezone = $4, updated_at = now() WHERE id = $1::uuid RETURNING id',
);

/** Sets a contact's data; false when the row is gone. */
export async function writeContactData(tx: SqlSession, id: string, { data, name, timezone }: ContactFields): Promise<boolean> {
  return (await tx.run(WRITE_CONTACT_DATA, [id, JSON.stringify(data), name, timezone])).length > 0;
}

const SET_CONTACT_STATUS = statement<{ id: string }>(
  'contacts.setContactStatus',
  'UPDATE contacts SET status = $2::"ContactStatus", updated_at = now() WHERE id = $1::uuid RETURNING id',
);

/** Sets a contact's status; false when the row is gone. */
export async function setContactStatus(tx: SqlSession, id: string, status: ContactStatus): Promise<boolean> {
  return (await tx.run(SET_CONTACT_STATUS, [id, status])).length > 0;
}

// ---------------------------------------------------------------------------------------------------------
// Erasure: removing people from contacts and from the history that names them.

const LOCK_LIVE_CONTACTS = statement<{ id: string; groupId: string }>(
  'contacts.lockLiveContacts',
  `SELECT id, contact_group_id AS "groupId" FROM contacts
   WHERE id = ANY($1::uuid[]) AND erased_at IS NULL ORDER BY id FOR UPDATE`,
);

/** Locks these contacts that are not erased, in id order; answers them with their groups. */
export function lockLiveContacts(tx: SqlSession, ids: readonly string[]) {
  return tx.run(LOCK_LIVE_CONTACTS, [ids]);
}

const HISTORY_FACTS = statement<{ id: string; onCall: boolean; kept: boolean }>(
  'contacts.historyFacts',
  `SELECT c.id,
          EXISTS (SELECT 1 FROM campaign_contacts cc WHERE cc.contact_id = c.id AND cc.state = 'dialing') AS "onCall",
          (EXISTS (SELECT 1 FROM campaign_contacts cc WHERE cc.contact_id = c.id)
           OR EXISTS (SELECT 1 FROM call_attempts a WHERE a.contact_id = c.id)
           OR EXISTS (SELECT 1 FROM appointments p WHERE p.contact_id = c.id)) AS kept
   FROM contacts c WHERE c.id = ANY($1::uuid[])`,
);

/** For each contact: whether a call to it is in flight, and whether any history names it. */
export function historyFacts(tx: SqlSession, ids: readonly string[]) {
  return tx.run(HISTORY_FACTS, [ids]);
}

const ERASE_CONTACTS = statement(
  'contacts.eraseContacts',
  `UPDATE contacts SET phone_number = NULL, name = '', data = '{}', timezone = NULL, erased_at = $2, updated_at = $2
   WHERE id = ANY($1::uuid[])`,
);

// Status, duration, cost, outcome and sentiment are the facts; the number, the words and the recording
// are the person's. The number stays as its pseudonym ($3: number -> pseudonym), the call record's
// (results/records.ts). $2 is the time of the change.
const PSEUDONYMISED_CALL = `to_number = NULL, to_number_hash = coalesce($3::jsonb ->> to_number, to_number_hash),
     summary = NULL, transcript = NULL, recording_url = NULL, analysis = '{}', pending_result = NULL, updated_at = $2`;

const ERASE_CALL_ATTEMPTS = statement(
  'contacts.eraseCallAttempts',
  `UPDATE call_attempts SET ${PSEUDONYMISED_CALL} WHERE contact_id = ANY($1::uuid[])`,
);

const PSEUDONYMISE_CALLS = statement(
  'contacts.pseudonymiseCalls',
  `UPDATE call_attempts SET ${PSEUDONYMISED_CALL} WHERE id = ANY($1::uuid[])`,
);

/** Keeps only the anonymous facts of these calls (and the pseudonyms of their numbers, from `pseudonyms`). */
export async function pseudonymiseCalls(tx: SqlSession, ids: readonly string[], now: Date, pseudonyms: ReadonlyMap<string, string>) {
  await tx.run(PSEUDONYMISE_CALLS, [ids, now, JSON.stringify(Object.fromEntries(pseudonyms))]);
}

const ENDED_CALLS_BETWEEN = statement<{ id: string; toNumber: string | null; createdAt: Date }>(
  'contacts.endedCallsBetween',
  `SELECT id, to_number AS "toNumber", created_at AS "createdAt" FROM call_attempts
   WHERE user_id = $1::uuid AND (created_at, id) > ($2, $3::uuid) AND created_at < $4 AND status NOT IN ${IN_FLIGHT_SQL}
   ORDER BY created_at, id LIMIT $5`,
);

/** Up to `limit` of the user's ended calls placed before `before` and after `after` (placed, id), oldest first. */
export function endedCallsBetween(tx: SqlSession, userId: string, after: { createdAt: Date; id: string }, before: Date, limit: number) {
  return tx.run(ENDED_CALLS_BETWEEN, [userId, after.createdAt, after.id, before, limit]);
}

const DIALED_NUMBERS = statement<{ number: string }>(
  'contacts.dialedNumbers',
  `SELECT DISTINCT to_number AS number FROM call_attempts WHERE contact_id = ANY($1::uuid[]) AND to_number IS NOT NULL`,
);

/** The numbers these contacts' calls dialed. */
export async function dialedNumbers(tx: SqlSession, ids: readonly string[]): Promise<string[]> {
  return (await tx.run(DIALED_NUMBERS, [ids])).map((row) => row.number);
}

const ERASE_APPOINTMENTS = statement(
  'contacts.eraseAppointments',
  `UPDATE appointments SET contact_snapshot = '{}', updated_at = $2,
     appointment_data = CASE WHEN appointment_data ? 'source_call_id'
                             THEN jsonb_build_object('source_call_id', appointment_data -> 'source_call_id') ELSE '{}' END
   WHERE contact_id = ANY($1::uuid[])`,
);

const CLOSE_WAITING = statement<{ campaignId: string }>(
  'contacts.closeWaitingDials',
  `UPDATE campaign_contacts SET state = 'done', outcome = 'cancelled', next_attempt_at = NULL, ready_at = NULL, updated_at = $2
   WHERE contact_id = ANY($1::uuid[]) AND state = 'pending'
   RETURNING campaign_id AS "campaignId"`,
);

/**
 * Erases these people in place: their contact rows, their calls (call_attempts) and appointments keep only
 * the anonymous facts (and a call its number's pseudonym, from `pseudonyms`), and campaigns stop waiting to dial them (campaign_contacts). Answers the campaigns
 * whose waiting contacts were closed.
 */
export async function erasePeople(
  tx: SqlSession,
  ids: readonly string[],
  now: Date,
  pseudonyms: ReadonlyMap<string, string>,
): Promise<string[]> {
  await tx.run(ERASE_CONTACTS, [ids, now]);
  await tx.run(ERASE_CALL_ATTEMPTS, [ids, now, JSON.stringify(Object.fromEntries(pseudonyms))]);
  await tx.run(ERASE_APPOINTMENTS, [ids, now]);
  const closed = await tx.run(CLOSE_WAITING, [ids, now]);
  return [...new Set(closed.map((c) => c.campaignId))];
}

const DELETE_CONTACTS = statement('contacts.deleteContacts', 'DELETE FROM contacts WHERE id = ANY($1::uuid[])');

export async function deleteContacts(tx: SqlSession, ids: readonly string[]): Promise<void> {
  await tx.run(DELETE_CONTACTS, [ids]);
}

// ---------------------------------------------------------------------------------------------------------
// The do-not-call list

export type DoNotCallQuery = { select?: Prisma.DoNotCallEntrySelect };
export type DoNotCallPage = Pick<Prisma.DoNotCallEntryFindManyArgs, 'take' | 'skip' | 'cursor'>;

/** An entry as Prisma reads it, for the surfaces. */
export interface DoNotCallEntry {
  id: string;
  userId: string;
  phoneNumber: string;
  source: string;
  reason: string;
  createdAt: Date;
}

export function findDoNotCall<Q extends DoNotCallQuery & DoNotCallPage>(db: PrismaClient, userId: string, query: Q) {
  return named('contacts.listDoNotCall', () =>
    db.doNotCallEntry.findMany({ ...query, where: { userId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] }),
  ) as Promise<Prisma.DoNotCallEntryGetPayload<Q>[]>;
}

export function countDoNotCall(db: PrismaClient, userId: string): Promise<number> {
  return named('contacts.countDoNotCall', () => db.doNotCallEntry.count({ where: { userId } }));
}

export function findDoNotCallEntry<Q extends DoNotCallQuery>(db: PrismaClient, userId: string, id: string, query: Q) {
  return named('contacts.findDoNotCallEntry', () =>
    db.doNotCallEntry.findFirst({ ...query, where: { id, userId } }),
  ) as Promise<Prisma.DoNotCallEntryGetPayload<Q> | null>;
}

const ENTRY_COLUMNS = `id, user_id AS "userId", phone_number AS "phoneNumber", source, reason, created_at AS "createdAt"`;

const IS_LISTED = statement<{ listed: boolean }>(
  'contacts.isListed',
  'SELECT EXISTS (SELECT 1 FROM do_not_call_entries WHERE user_id = $1::uuid AND phone_number = $2) AS listed',
);

export async function isListed(sql: SqlSession, userId: string, phoneNumber: string): Promise<boolean> {
  const [row] = await sql.run(IS_LISTED, [userId, phoneNumber]);
  return row!.listed;
}

const INSERT_ENTRY = statement<DoNotCallEntry>(
  'contacts.insertDoNotCallEntry',
  `INSERT INTO do_not_call_entries (id, user_id, phone_number, source, reason, created_at)
   VALUES ($1::uuid, $2::uuid, $3, $4, $5, now())
   ON CONFLICT (user_id, phone_number) DO NOTHING
   RETURNING ${ENTRY_COLUMNS}`,
);

const ENTRY_BY_NUMBER = statement<DoNotCallEntry>(
  'contacts.doNotCallEntryByNumber',
  `SELECT ${ENTRY_COLUMNS} FROM do_not_call_entries WHERE user_id = $1::uuid AND phone_number = $2`,
);

/** Puts the number on the list unless it is there; answers the entry, new or earlier. */
export async function insertDoNotCallEntry(
  tx: SqlSession,
  entry: { userId: string; phoneNumber: string; reason: string; source: string },
): Promise<DoNotCallEntry> {
  const [inserted] = await tx.run(INSERT_ENTRY, [uuidv7(), entry.userId, entry.phoneNumber, entry.source, entry.reason]);
  if (inserted) return inserted;
  // On a key another transaction holds, the insert waited for it; this later statement sees its row.
  const [earlier] = await tx.run(ENTRY_BY_NUMBER, [entry.userId, entry.phoneNumber]);
  return earlier!;
}

const DELETE_ENTRY = statement<DoNotCallEntry>(
  'contacts.deleteDoNotCallEntry',
  `DELETE FROM do_not_call_entries WHERE user_id = $1::uuid AND phone_number = $2 RETURNING ${ENTRY_COLUMNS}`,
);

/** Takes the number off the list; answers the entry it removed, if any. */
export async function deleteDoNotCallEntry(tx: SqlSession, userId: string, phoneNumber: string): Promise<DoNotCallEntry | undefined> {
  const [entry] = await tx.run(DELETE_ENTRY, [userId, phoneNumber]);
  return entry;
}

const SET_NUMBER_STATUS = statement(
  'contacts.setNumberStatus',
  `UPDATE contacts SET status = $4::"ContactStatus", updated_at = now()
   WHERE user_id = $1::uuid AND phone_number = $2 AND status = $3::"ContactStatus"`,
);

/** Moves the user's contacts with this number, in every group, from one status to another. */
export async function setNumberStatus(tx: SqlSession, userId: string, phoneNumber: string, from: ContactStatus, to: ContactStatus) {
  await tx.run(SET_NUMBER_STATUS, [userId, phoneNumber, from, to]);
}

const INSERT_LISTED_NUMBERS = statement(
  'contacts.insertListedNumbers',
  `INSERT INTO do_not_call_entries (id, user_id, phone_number, source, reason, created_at)
   SELECT n.id, n.user_id, n.phone_number, $4, $5, now() FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS n(id, user_id, phone_number)
   ON CONFLICT (user_id, phone_number) DO NOTHING`,
);

/** Puts many users' numbers on their lists at once (those already there stay as they are). */
export async function insertListedNumbers(
  tx: SqlSession,
  numbers: readonly { userId: string; phoneNumber: string }[],
  reason: string,
  source: string,
): Promise<void> {
  await tx.run(INSERT_LISTED_NUMBERS, [
    numbers.map(() => uuidv7()),
    numbers.map((n) => n.userId),
    numbers.map((n) => n.phoneNumber),
    source,
    reason,
  ]);
}

const MARK_LISTED_CONTACTS = statement(
  'contacts.markListedContacts',
  `UPDATE contacts c SET status = 'do_not_call', updated_at = now()
   FROM unnest($1::uuid[], $2::text[]) AS n(user_id, phone_number)
   WHERE c.user_id = n.user_id AND c.phone_number = n.phone_number AND c.status = 'active'`,
);

/** Marks the active contacts of these users' numbers `do_not_call`, in every group. */
export async function markListedContacts(sql: SqlSession, numbers: readonly { userId: string; phoneNumber: string }[]): Promise<void> {
  await sql.run(MARK_LISTED_CONTACTS, [numbers.map((n) => n.userId), numbers.map((n) => n.phoneNumber)]);
}

// ---------------------------------------------------------------------------------------------------------
// Import

const INSERT_IMPORTED_GROUP = statement<{ now: string }>(
  'contacts.insertImportedGroup',
  // Also answers the transaction's time, which the contacts get as created_at and updated_at, as now() would give them.
  `INSERT INTO contact_groups (id, user_id, name, description, created_at, updated_at)
   VALUES ($1::uuid, $2::uuid, $3, $4, now(), now()) RETURNING now()::text AS now`,
);

/**
 * Creates an import's group, its total and columns to come (finishImportedGroup); answers the transaction's
 * time as text, for its contacts' timestamps.
 */
export async function insertImportedGroup(
  tx: SqlSession,
  group: { id: string; userId: string; name: string; description: string },
): Promise<string> {
  const [row] = await tx.run(INSERT_IMPORTED_GROUP, [group.id, group.userId, group.name, group.description]);
  return row!.now;
}

/** A contact an import writes. */
export interface ImportedContact extends ContactFields {
  id: string;
  phoneNumber: string | null;
  status: ContactStatus;
}

// Contacts go in with COPY: PostgreSQL reads its text format for some 0.4 s less CPU per 100,000 rows than
// the same rows as a JSON document through jsonb_to_recordset.
const CONTACT_COLUMNS = [
  'id',
  'user_id',
  'contact_group_id',
  'phone_number',
  'status',
  'data',
  'timezone',
  'name',
  'created_at',
  'updated_at',
];

/** Contacts on their way into one group through one COPY (`contacts.copyContacts`). */
export interface ContactCopy {
  /** Resolves once the database is ready for more. */
  write(contacts: readonly ImportedContact[]): Promise<void>;
  /** Resolves once the database has every contact. */
  end(): Promise<void>;
}

/**
 * Starts a COPY into contacts for one group's new rows; `now` (the transaction's time, as text) is their
 * created_at and updated_at. Nothing else may run in the transaction until it ends.
 */
export function copyContacts(tx: SqlTransaction, userId: string, groupId: string, now: string): ContactCopy {
  const copy = tx.copyInto('contacts', CONTACT_COLUMNS);
  const tail = `\t${now}\t${now}\n`;
  const head = `\t${userId}\t${groupId}\t`;
  const line = ({ id, phoneNumber, status, data, timezone, name }: ImportedContact) => {
    // JSON text holds no tab or line end (JSON.stringify escapes them), so only its backslashes need escaping.
    const json = JSON.stringify(data);
    const dataText = json.includes('\\') ? json.replaceAll('\\', '\\\\') : json;
    return `${id}${head}${copyText(phoneNumber)}\t${status}\t${dataText}\t${copyText(timezone)}\t${copyText(name)}${tail}`;
  };
  return {
    write: (contacts) => copy.write(contacts.map(line).join('')),
    end: () => copy.end(),
  };
}

const CONTACTS_BY_NUMBERS = statement<{ id: string; phoneNumber: string; data: unknown }>(
  'contacts.contactsByNumbers',
  `SELECT id, phone_number AS "phoneNumber", data FROM contacts WHERE contact_group_id = $1::uuid AND phone_number = ANY($2::text[])`,
);

/** The group's contacts with these numbers (one each at most), with their stored data. */
export function contactsByNumbers(tx: SqlSession, groupId: string, phoneNumbers: readonly string[]) {
  return tx.run(CONTACTS_BY_NUMBERS, [groupId, phoneNumbers]);
}

const REWRITE_GROUP_CONTACTS = statement(
  'contacts.rewriteGroupContacts',
  `UPDATE contacts SET data = r.data, name = r.name, timezone = r.timezone
   FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, data jsonb, timezone text, name text)
   WHERE contacts.id = r.id AND contacts.user_id = $2::uuid AND contacts.contact_group_id = $3::uuid`,
);

/** Sets the data of many contacts of one group (of this user) at once. */
export async function rewriteGroupContacts(
  tx: SqlSession,
  userId: string,
  groupId: string,
  contacts: readonly (ContactFields & { id: string })[],
): Promise<void> {
  await tx.run(REWRITE_GROUP_CONTACTS, [JSON.stringify(contacts), userId, groupId]);
}

// Joined to the file's numbers, so the plan costs the file or the list, whichever is cheaper: a list
// given as `= ANY(numbers)` was planned with the numbers as a filter of each entry (13 s for 6,000
// numbers on the embedded database).
const LISTED_AMONG = statement<{ phoneNumber: string }>(
  'contacts.listedAmong',
  `SELECT d.phone_number AS "phoneNumber"
   FROM unnest($2::text[]) AS n(phone_number) JOIN do_not_call_entries d ON d.user_id = $1::uuid AND d.phone_number = n.phone_number`,
);

/** Those of these numbers on the user's do-not-call list. */
export async function listedAmong(sql: SqlSession, userId: string, numbers: readonly string[]): Promise<string[]> {
  if (numbers.length === 0) return [];
  return (await sql.run(LISTED_AMONG, [userId, numbers])).map((r) => r.phoneNumber);
}

const MARK_NEVER_CALLED = statement(
  'contacts.markNeverCalled',
  `UPDATE contacts SET status = 'do_not_call' WHERE contact_group_id = $1::uuid AND phone_number = ANY($2::text[]) AND status = 'active'`,
);

/** Marks the group's active contacts with these numbers as never to be called. */
export async function markNeverCalled(tx: SqlSession, groupId: string, numbers: readonly string[]): Promise<void> {
  if (numbers.length > 0) await tx.run(MARK_NEVER_CALLED, [groupId, numbers]);
}

const FINISH_IMPORTED_GROUP = statement(
  'contacts.finishImportedGroup',
  'UPDATE contact_groups SET total = $2, csv_headers = $3::jsonb WHERE id = $1::uuid',
);

/** Sets an import's group's total and columns, known once its rows are all written. */
export async function finishImportedGroup(tx: SqlSession, id: string, group: { total: number; csvHeaders: string[] }): Promise<void> {
  await tx.run(FINISH_IMPORTED_GROUP, [id, group.total, JSON.stringify(group.csvHeaders)]);
}

const INSERT_REGISTRY_NUMBERS = statement<{ phoneNumber: string }>(
  'contacts.insertRegistryNumbers',
  `INSERT INTO do_not_call_entries (id, user_id, phone_number, source, reason, created_at)
   SELECT n.id, $1::uuid, n.phone_number, 'registry', $4, now() FROM unnest($2::uuid[], $3::text[]) AS n(id, phone_number)
   ON CONFLICT (user_id, phone_number) DO NOTHING
   RETURNING phone_number AS "phoneNumber"`,
);

/** Puts a user's numbers from an outside list on the list (those already there stay as they are); the numbers added. */
export async function insertRegistryNumbers(tx: SqlSession, userId: string, numbers: readonly string[], reason: string): Promise<string[]> {
  const rows = await tx.run(INSERT_REGISTRY_NUMBERS, [userId, numbers.map(() => uuidv7()), numbers, reason]);
  return rows.map((r) => r.phoneNumber);
}

// The consents contacts gave. (The dialer writes dial blocks with its claim, in one statement: see
// dialer/store/placing.ts.)

// The import normalised each consent cell to an ISO instant, `yes`, or `revoked` (contacts/fields.ts): a
// revocation is recorded as a consent of the kind revoked at the import, which counts for every contact
// of the user with the number.
const importedConsentsStatement = statement(
  'compliance.imported_consents',
  `INSERT INTO contact_consents (id, user_id, contact_id, kind, source, obtained_at, proof, revoked_at, created_at)
   SELECT gen_random_uuid(), c.user_id, c.id, k.kind::"ConsentKind", left(coalesce(nullif(c.data->>'consent_source', ''), 'import'), 200),
          CASE WHEN k.value IN ('yes', 'revoked') THEN $2 ELSE k.value::timestamptz END, left(nullif(c.data->>'consent_proof', ''), 2000),
          CASE WHEN k.value = 'revoked' THEN $2 END, $2
   FROM contacts c
   CROSS JOIN LATERAL (VALUES ('calls', c.data->>'consent_calls'), ('ai_calls', c.data->>'consent_ai_calls'),
                              ('recording', c.data->>'consent_recording')) AS k(kind, value)
   WHERE c.contact_group_id = $1::uuid AND k.value IS NOT NULL`,
);

/** Records the consents the rows of an imported group carry; `now` stands for a consent given without a date. */
export async function recordImportedConsents(tx: SqlSession, groupId: string, now: Date): Promise<void> {
  await tx.run(importedConsentsStatement, [groupId, now]);
}

export type ConsentQuery = Omit<Prisma.ContactConsentFindUniqueArgs, 'where'>;

export function createConsent(ctx: ServiceContext, data: Omit<Prisma.ContactConsentUncheckedCreateInput, 'userId'>, query: ConsentQuery) {
  return named('compliance.createConsent', () => ctx.db.contactConsent.create({ ...query, data: { ...data, userId: ctx.user.id } }));
}

export function findConsent(ctx: ServiceContext, id: string, query: ConsentQuery) {
  return named('compliance.consent', () => ctx.db.contactConsent.findFirst({ ...query, where: { id, userId: ctx.user.id } }));
}

// Every contact of the user with the consent's number (a person is their number), locked as the dialer's
// claim locks the contacts it calls: a claim under way finishes first, and a later one sees the revocation.
const lockHoldersStatement = statement<{ id: string }>(
  'compliance.lock_consent_holders',
  `WITH holder AS (SELECT c.id, c.phone_number FROM contact_consents g JOIN contacts c ON c.id = g.contact_id
                   WHERE g.id = $1::uuid AND g.user_id = $2::uuid)
   SELECT o.id FROM contacts o
   WHERE o.id = (SELECT id FROM holder) OR (o.user_id = $2::uuid AND o.phone_number = (SELECT phone_number FROM holder))
   ORDER BY o.id FOR NO KEY UPDATE OF o`,
);

const revokeConsentStatement = statement(
  'compliance.revoke_consent',
  'UPDATE contact_consents SET revoked_at = $2 WHERE id = $1::uuid AND revoked_at IS NULL',
);

/** Locks the contacts the consent's revocation stops calls to; false when the consent is not the user's. */
export async function lockConsentHolders(tx: SqlSession, userId: string, id: string): Promise<boolean> {
  return (await tx.run(lockHoldersStatement, [id, userId])).length > 0;
}

/** Revokes the consent (once: a revoked one keeps its first revocation). */
export async function revokeConsent(tx: SqlSession, id: string, at: Date): Promise<void> {
  await tx.run(revokeConsentStatement, [id, at]);
}
