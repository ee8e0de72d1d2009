import { statement, type SqlSession } from '../../../db/sql.js';
import type { ConsentKind } from '../../../generated/prisma/client.js';

// The statements of in-call tools: the call a tool runs for, locked, with what each tool needs of its
// contact, campaign and agent; and what a tool writes on the call itself.

/** A call a tool was asked for, with its contact, campaign and the agent on the call. */
export interface ToolCall {
  id: string;
  userId: string;
  campaignId: string;
  contactId: string;
  status: string;
  providerCallId: string | null;
  /** Its end was reported already (the result waits on the attempt): the call is over. */
  ended: boolean;
  toNumber: string | null;
  callbackAt: Date | null;
  optedOutAt: Date | null;
  contactTimezone: string | null;
  contactRegion: string | null;
  contactData: unknown;
  /** The consents the contact holds (not revoked). */
  consents: ConsentKind[];
  campaignTimezone: string;
  callingHours: unknown;
  activeDays: unknown;
  requiredConsent: ConsentKind[];
  regionalRules: boolean;
  /** When the customer's latest exemption from the regional rules ends; null: none was granted. */
  exemptionEndsAt: Date | null;
  campaignCalendar: unknown;
  transferNumber: string | null;
  /** The agent on the call: the contact's A/B variant's, else the campaign's. */
  agentId: string;
  agentCalendar: unknown;
  providerAgentId: string | null;
}

// Found by our attempt id (the call's metadata) or, for a call created without it, by the provider's call
// id; locked as a batch of results locks it, so a tool and the call's end take turns.
const lockCallStatement = statement<ToolCall>(
  'voice.lock_call',
  `SELECT a.id, a.user_id AS "userId", a.campaign_id AS "campaignId", a.contact_id AS "contactId", a.status::text,
          a.provider_call_id AS "providerCallId", a.pending_result IS NOT NULL AS ended, a.to_number AS "toNumber",
          a.callback_at AS "callbackAt", a.opted_out_at AS "optedOutAt",
          c.timezone AS "contactTimezone", c.data->>'region' AS "contactRegion", c.data AS "contactData",
          ARRAY(SELECT DISTINCT g.kind::text FROM contact_consents g WHERE g.contact_id = c.id AND g.revoked_at IS NULL) AS consents,
          k.timezone AS "campaignTimezone", k.calling_hours AS "callingHours", k.active_days AS "activeDays",
          coalesce(k.required_consent, '{}')::text[] AS "requiredConsent", k.regional_rules AS "regionalRules",
          (SELECT max(x.expires_at) FROM regional_rule_exemptions x WHERE x.user_id = k.user_id) AS "exemptionEndsAt",
          k.booking_calendar AS "campaignCalendar",
          coalesce(k.transfer_number, ag.agent_config->>'transfer_number') AS "transferNumber",
          ag.id AS "agentId", ag.booking_calendar AS "agentCalendar", ag.provider_agent_id AS "providerAgentId"
   FROM call_attempts a
   JOIN contacts c ON c.id = a.contact_id
   JOIN campaigns k ON k.id = a.campaign_id
   LEFT JOIN campaign_contacts cc ON cc.campaign_id = a.campaign_id AND cc.contact_id = a.contact_id
   LEFT JOIN campaign_variants v ON v.id = cc.variant_id
   JOIN agents ag ON ag.id = coalesce(v.agent_id, k.agent_id)
   WHERE a.id = $1::uuid OR ($2::boolean AND a.provider_call_id = $3)
   FOR NO KEY UPDATE OF a`,
);

export async function lockToolCall(tx: SqlSession, attemptId: string | null, providerCallId: string | null): Promise<ToolCall | undefined> {
  return (await tx.run(lockCallStatement, [attemptId, attemptId === null && providerCallId !== null, providerCallId]))[0];
}

const optedOutStatement = statement(
  'voice.opted_out',
  'UPDATE call_attempts SET opted_out_at = coalesce(opted_out_at, $2), updated_at = $2 WHERE id = $1::uuid',
);

/** The callee asked during the call not to be called again: its end keeps the contact done as do_not_call. */
export async function markOptedOut(tx: SqlSession, attemptId: string, now: Date): Promise<void> {
  await tx.run(optedOutStatement, [attemptId, now]);
}

const callbackStatement = statement('voice.callback', 'UPDATE call_attempts SET callback_at = $2, updated_at = $3 WHERE id = $1::uuid');

/** The callback the callee asked for during the call: its end makes the contact due then. */
export async function setCallback(tx: SqlSession, attemptId: string, at: Date, now: Date): Promise<void> {
  await tx.run(callbackStatement, [attemptId, at, now]);
}
