import type { Prisma } from '../../generated/prisma/client.js';
import { ConflictError } from '../errors.js';
import { refreshTotals } from './totals.js';

// Removing people. What was done with a person (dial states, calls, their cost, appointments) is the
// history of the campaigns that called them and of the money they cost, so it stays; who the person was
// goes for good. A contact with such history is erased in place: its row stays, anonymous, so reports,
// call history and the ledger keep their figures. A contact without any is deleted outright.

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
export async function removeContacts(tx: Prisma.TransactionClient, contactIds: string[], now: Date): Promise<Removal> {
  // Locked first, in a statement of its own, so that the checks below see every tick that held them.
  const locked = await tx.$queryRaw<{ id: string; groupId: string }[]>`
    SELECT id, contact_group_id AS "groupId" FROM contacts
    WHERE id = ANY(${contactIds}::uuid[]) AND erased_at IS NULL ORDER BY id FOR UPDATE`;
  if (locked.length === 0) return { erased: 0, deleted: 0, campaignIds: [] };
  const ids = locked.map((c) => c.id);
  const facts = await tx.$queryRaw<{ id: string; onCall: boolean; kept: boolean }[]>`
    SELECT c.id,
           EXISTS (SELECT 1 FROM campaign_contacts cc WHERE cc.contact_id = c.id AND cc.state = 'dialing') AS "onCall",
           (EXISTS (SELECT 1 FROM campaign_contacts cc WHERE cc.contact_id = c.id)
            OR EXISTS (SELECT 1 FROM call_attempts a WHERE a.contact_id = c.id)
            OR EXISTS (SELECT 1 FROM appointments p WHERE p.contact_id = c.id)) AS kept
    FROM contacts c WHERE c.id = ANY(${ids}::uuid[])`;
  if (facts.some((f) => f.onCall)) {
    throw new ConflictError('A call to this contact is in progress; delete it once the call has ended.', 'contact_on_call');
  }
  const kept = facts.filter((f) => f.kept).map((f) => f.id);
  const gone = facts.filter((f) => !f.kept).map((f) => f.id);

  let campaignIds: string[] = [];
  if (kept.length) {
    await tx.$executeRaw`
      UPDATE contacts SET phone_number = NULL, name = '', data = '{}', timezone = NULL, erased_at = ${now}, updated_at = ${now}
      WHERE id = ANY(${kept}::uuid[])`;
    // Status, duration, cost, outcome and sentiment are the facts; the number, the words and the recording
    // are the person's.
    await tx.$executeRaw`
      UPDATE call_attempts SET to_number = NULL, summary = NULL, transcript = NULL, recording_url = NULL,
        analysis = '{}', pending_result = NULL, updated_at = ${now}
      WHERE contact_id = ANY(${kept}::uuid[])`;
    await tx.$executeRaw`
      UPDATE appointments SET contact_snapshot = '{}', updated_at = ${now},
        appointment_data = CASE WHEN appointment_data ? 'source_call_id'
                                THEN jsonb_build_object('source_call_id', appointment_data -> 'source_call_id') ELSE '{}' END
      WHERE contact_id = ANY(${kept}::uuid[])`;
    const closed = await tx.$queryRaw<{ campaignId: string }[]>`
      UPDATE campaign_contacts SET state = 'done', outcome = 'cancelled', next_attempt_at = NULL, ready_at = NULL, updated_at = ${now}
      WHERE contact_id = ANY(${kept}::uuid[]) AND state = 'pending'
      RETURNING campaign_id AS "campaignId"`;
    campaignIds = [...new Set(closed.map((c) => c.campaignId))];
  }
  if (gone.length) await tx.$executeRaw`DELETE FROM contacts WHERE id = ANY(${gone}::uuid[])`;
  await refreshTotals(tx, locked.map((c) => c.groupId));
  return { erased: kept.length, deleted: gone.length, campaignIds };
}
