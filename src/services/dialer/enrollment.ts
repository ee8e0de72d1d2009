import type { Prisma } from '../../generated/prisma/client.js';

/**
 * Enrolls the contacts of the campaign's group that are not enrolled yet (erased ones are nobody to
 * call): callable contacts wait as `pending`, ready at once; invalid and do-not-call contacts are `done`
 * at once with that as their outcome. Run it in
 * the transaction that starts (or resumes) the campaign, so the dialer never sees a running campaign
 * without its contacts. Contacts added to the group later join at the next start or resume. `now` is
 * the service clock's, so waiting contacts are due from the moment the campaign starts.
 */
export async function enrollContacts(tx: Prisma.TransactionClient, campaignId: string, now: Date): Promise<number> {
  return tx.$executeRaw`
    INSERT INTO campaign_contacts (id, campaign_id, contact_id, state, outcome, next_attempt_at, ready_at, updated_at)
    SELECT gen_random_uuid(), c.campaign_id, c.contact_id, c.state::"DialState", c.outcome, ${now}, ${now}, ${now}
    FROM (
      SELECT campaigns.id AS campaign_id, contacts.id AS contact_id,
             CASE contacts.status WHEN 'active' THEN 'pending' ELSE 'done' END AS state,
             CASE contacts.status WHEN 'active' THEN NULL ELSE contacts.status::text END AS outcome
      FROM campaigns JOIN contacts ON contacts.contact_group_id = campaigns.contact_group_id
      WHERE campaigns.id = ${campaignId}::uuid AND contacts.erased_at IS NULL
    ) AS c
    ON CONFLICT (campaign_id, contact_id) DO NOTHING`;
}
