import { statement, type SqlSession } from '../../../db/sql.js';

// The statement of the voice runtime's configuration: the call a token is for, with what its agent
// hears of it (the contact's fields, the campaign's transfer number and voicemail policy). The agent
// itself is read as provisioning reads it, and the secret tokens are signed with kept, by ../store.ts.

export interface RuntimeCall {
  id: string;
  userId: string;
  status: string;
  /** Its end was reported already (the result waits on the attempt): the call is over. */
  ended: boolean;
  providerCallId: string | null;
  toNumber: string | null;
  placedAt: Date;
  /** The agent the call uses (the contact's A/B variant's, else the campaign's) and its version; null on calls from before agents were recorded. */
  agentId: string | null;
  agentVersion: number | null;
  contactData: unknown;
  contactRegion: string | null;
  transferNumber: string | null;
  scheduleConfig: unknown;
}

const callStatement = statement<RuntimeCall>(
  'voiceRuntime.call',
  `SELECT a.id, a.user_id AS "userId", a.status::text, a.pending_result IS NOT NULL AS ended, a.provider_call_id AS "providerCallId",
          a.to_number AS "toNumber", a.created_at AS "placedAt", a.agent_id AS "agentId", a.agent_version AS "agentVersion",
          c.data AS "contactData", c.data->>'region' AS "contactRegion",
          k.transfer_number AS "transferNumber", k.schedule_config AS "scheduleConfig"
   FROM call_attempts a
   JOIN contacts c ON c.id = a.contact_id
   JOIN campaigns k ON k.id = a.campaign_id
   WHERE a.id = $1::uuid`,
);

export async function runtimeCall(sql: SqlSession, attemptId: string): Promise<RuntimeCall | undefined> {
  return (await sql.run(callStatement, [attemptId]))[0];
}
