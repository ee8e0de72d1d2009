import type { SqlSession } from '../../db/sql.js';
import { ConflictError } from '../errors.js';
import * as store from './store.js';
import { changeTotals } from './totals.js';
import { pseudonymKey, pseudonymOf } from '../results/records.js';

// Removing people. What was done with a person (dial states, calls, their cost, appointments) is the
// history of the campaigns that called them and of the money they cost, so it stays; who the person was
// goes for good. A contact with such history is erased in place: its row stays, anonymous, so reports,
// call history and the ledger keep their figures; its calls keep their five-year records, the number
// dialed replaced by its pseudonym. A contact without any is deleted outright.

export interface Removal {
  /** Contacts erased in place: anonymous rows kept for the history that names them. */
  erased: number;
  /** Contacts deleted outright: nothing named them. */
  deleted: number;
  /** Campaigns whose waiting contacts were among them: their progress changed. */
  campaignIds: string[];
}

/**
 * Removes these contacts (those not erased already) inside the caller's transaction, and recounts their
 * groups. Refused (409 `contact_on_call`) while a call to one of them is in flight: its result, still to
 * come, is history too, and would arrive with nobody to attribute it to.
 */
export async function removeContacts(tx: SqlSession, contactIds: string[], now: Date): Promise<Removal> {
  // Locked first, in a statement of its own, so that the checks below see every tick that held them.
  const locked = await store.lockLiveContacts(tx, contactIds);
  if (locked.length === 0) return { erased: 0, deleted: 0, campaignIds: [] };
  const facts = await store.historyFacts(
    tx,
    locked.map((c) => c.id),
  );
  if (facts.some((f) => f.onCall)) {
    throw new ConflictError('A call to this contact is in progress; delete it once the call has ended.', 'contact_on_call');
  }
  const kept = facts.filter((f) => f.kept).map((f) => f.id);
  const gone = facts.filter((f) => !f.kept).map((f) => f.id);

  const campaignIds = kept.length ? await store.erasePeople(tx, kept, now, await pseudonyms(tx, kept)) : [];
  if (gone.length) await store.deleteContacts(tx, gone);
  await changeTotals(
    tx,
    [],
    locked.map((c) => c.groupId),
  );
  return { erased: kept.length, deleted: gone.length, campaignIds };
}

/** Each number these contacts' calls dialed, with its pseudonym (the key is read only when there is one). */
async function pseudonyms(tx: SqlSession, ids: string[]): Promise<Map<string, string>> {
  const numbers = await store.dialedNumbers(tx, ids);
  if (numbers.length === 0) return new Map();
  const key = await pseudonymKey(tx);
  return new Map(numbers.map((n) => [n, pseudonymOf(key, n)]));
}
