import { statement, type SqlSession } from '../../../db/sql.js';

// A callback the callee asked for, cancelled before its call: the contact is done as its last call left
// it (reached when that call was a conversation).

const cancelStatement = statement<{ id: string }>(
  'dialer.cancel_callback',
  `UPDATE campaign_contacts cc SET callback_at = NULL, state = 'done', next_attempt_at = NULL, ready_at = NULL,
     outcome = CASE WHEN cc.last_status = 'completed' THEN 'reached' ELSE 'not_reached' END, updated_at = now()
   FROM campaigns k
   WHERE cc.campaign_id = $1::uuid AND cc.contact_id = $2::uuid AND k.id = cc.campaign_id AND k.user_id = $3::uuid
     AND cc.callback_at IS NOT NULL AND cc.state = 'pending'
   RETURNING cc.id`,
);

/** False when the user's campaign has no callback waiting for the contact (none asked, or its call is under way). */
export async function cancelWaitingCallback(sql: SqlSession, campaignId: string, contactId: string, userId: string): Promise<boolean> {
  return (await sql.run(cancelStatement, [campaignId, contactId, userId])).length > 0;
}
