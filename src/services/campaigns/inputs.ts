import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { CampaignPurpose, ConsentKind } from '../../generated/prisma/enums.js';
import { DEFAULT_PURPOSE } from '../calling-rules/registries.js';
import { describedAs, int64, jsonObject, timeZone, uuid, type RawInput } from '../validation.js';
import {
  activeDays,
  CAMPAIGN_DEFAULTS,
  callingHours,
  DEFAULT_ACTIVE_DAYS,
  DEFAULT_CALLING_HOURS,
  describeDays,
  intInRange,
  scheduleConfig,
} from '../calling-rules/schedule.js';

// What a client may write on a campaign, with the rules of both surfaces: the contract's limits (max
// lengths, the 64-bit range) first, then business ranges. Checks that need the database or the clock
// (ownership, the agent being active, a start in the future) run in campaigns.ts.

const CONSENT_KINDS = Object.values(ConsentKind);

const DATETIME_MESSAGE = 'Datetime has wrong format. Use ISO 8601, e.g. 2026-01-31T09:00:00Z.';

/** An ISO 8601 string with a zone (v1) or a Date (GraphQL). */
export const instant = describedAs(
  z.union([z.date(), z.iso.datetime({ offset: true }).transform((text) => new Date(text))], { error: DATETIME_MESSAGE }),
  { type: 'string', format: 'date-time' },
);

/** The editable fields, without defaults: an update changes only what it names. Keys are the stored columns'. */
export const CAMPAIGN_FIELDS = {
  name: z.string().trim().min(1).max(255),
  description: z.string().max(10_000),
  agent_id: uuid.describe('One of your active agents.'),
  contact_group_id: uuid.describe('One of your contact groups.'),
  concurrent_calls: intInRange(1, 1000).describe(`Calls in flight at once, 1 to 1000 (default ${CAMPAIGN_DEFAULTS.concurrent_calls}).`),
  max_retry_days: intInRange(0, 365).describe(
    `Days after the first attempt a contact may still be retried, 0 to 365 (default ${CAMPAIGN_DEFAULTS.max_retry_days}).`,
  ),
  calling_hours: callingHours.describe(`Default ${DEFAULT_CALLING_HOURS.start} to ${DEFAULT_CALLING_HOURS.end}.`),
  active_days: activeDays.describe(`Default ${describeDays(DEFAULT_ACTIVE_DAYS)}.`),
  schedule_config: scheduleConfig,
  field_mappings: jsonObject,
  selected_contact_fields: z.array(z.string().max(255)),
  timezone: timeZone.describe(`IANA time zone of the calling hours (default ${CAMPAIGN_DEFAULTS.timezone}).`),
  call_insights: jsonObject,
  post_call_analyzers: z.array(jsonObject),
  spend_cap_cents: describedAs(int64, { type: 'integer', format: 'int64' })
    .pipe(z.bigint().min(0n).max(BigInt(Number.MAX_SAFE_INTEGER)))
    .nullable()
    .describe(
      'The most its calls may be charged in all, in cents; null: no cap. It pauses with spend_cap_reached before a call that could go over.',
    ),
  required_consent: z
    .array(z.enum(ConsentKind))
    .transform((kinds) => CONSENT_KINDS.filter((kind) => kinds.includes(kind)))
    .describe(
      'Consents a contact must hold to be called (calls, ai_calls, recording); a contact without one is skipped (consent_missing).',
    ),
  regional_rules: z
    .boolean()
    .describe(
      "Whether the regional rules of the callee's place (hours, days, holidays, frequency caps) apply (default true); false only while an admin's exemption is in force for the account.",
    ),
  purpose: z
    .enum(CampaignPurpose)
    .describe(
      `What its calls are for (default ${DEFAULT_PURPOSE}): solicitation is held to the national do-not-call registries, informational calls are not.`,
    ),
  call_subject: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .nullable()
    .describe(
      "What its calls are about, for the frequency caps counted per subject (Florida, Oklahoma, Maryland): they count the calls of the customer's campaigns naming the same subject or none. Null (the default): every call of the customer counts.",
    ),
  /** The planned start while draft or scheduled; once started, when it started. */
  started_at: instant.nullable().describe('Planned start, in the future.'),
};

const CREATABLE_STATUSES = ['draft', 'scheduled'] as const;

export const createCampaignInput = z.object({
  ...CAMPAIGN_FIELDS,
  description: CAMPAIGN_FIELDS.description.default(''),
  status: z
    .string()
    .max(32)
    .pipe(z.enum(CREATABLE_STATUSES))
    .default('draft')
    .describe('draft (the default) or scheduled, which needs a future started_at.'),
  concurrent_calls: CAMPAIGN_FIELDS.concurrent_calls.default(CAMPAIGN_DEFAULTS.concurrent_calls),
  max_retry_days: CAMPAIGN_FIELDS.max_retry_days.default(CAMPAIGN_DEFAULTS.max_retry_days),
  calling_hours: CAMPAIGN_FIELDS.calling_hours.default(() => ({ ...DEFAULT_CALLING_HOURS })),
  active_days: CAMPAIGN_FIELDS.active_days.default(() => [...DEFAULT_ACTIVE_DAYS]),
  schedule_config: scheduleConfig.prefault({}),
  field_mappings: jsonObject.default(() => ({})),
  selected_contact_fields: CAMPAIGN_FIELDS.selected_contact_fields.default(() => []),
  timezone: CAMPAIGN_FIELDS.timezone.default(CAMPAIGN_DEFAULTS.timezone),
  call_insights: jsonObject.default(() => ({})),
  post_call_analyzers: CAMPAIGN_FIELDS.post_call_analyzers.default(() => []),
  spend_cap_cents: CAMPAIGN_FIELDS.spend_cap_cents.optional(),
  required_consent: CAMPAIGN_FIELDS.required_consent.optional(),
  regional_rules: CAMPAIGN_FIELDS.regional_rules.optional(),
  purpose: CAMPAIGN_FIELDS.purpose.default(DEFAULT_PURPOSE),
  call_subject: CAMPAIGN_FIELDS.call_subject.optional(),
  started_at: CAMPAIGN_FIELDS.started_at.optional(),
  // Write-only (v1): checked against the agent and the group, never stored.
  agent_name: z.string().max(255).optional().describe("Write-only: when given, must be the agent's name."),
  agent_phone_number: z.string().max(64).optional().describe("Write-only: when given, must be one of the agent's numbers (any format)."),
  contact_group_name: z.string().max(255).optional().describe("Write-only: when given, must be the contact group's name."),
  contact_group_total: describedAs(int64, { type: 'integer', format: 'int64' })
    .optional()
    .describe("Write-only: when given, must be the contact group's total."),
});
export type CreateCampaignInput = RawInput<typeof createCampaignInput>;

export const updateCampaignInput = z.object(CAMPAIGN_FIELDS).partial();
export type UpdateCampaignInput = RawInput<typeof updateCampaignInput>;
export type UpdateCampaignColumns = z.output<typeof updateCampaignInput>;

// What a new campaign holds for a field its creator leaves out: the defaults above, and the database's
// for the fields without one here.
const LEFT_OUT: Partial<Record<string, unknown>> = { required_consent: [], regional_rules: true };

/**
 * The fields a new campaign's history entry names: its name, agent, group and status, and each setting
 * whose value is not what a campaign gets when it is left out (for a clone, what it carried over that is
 * not a default). Keys are the stored columns'.
 */
export function fieldsSetAtCreation(input: z.output<typeof createCampaignInput>): string[] {
  const defaults: Record<string, unknown> = createCampaignInput.parse({
    name: input.name,
    agent_id: input.agent_id,
    contact_group_id: input.contact_group_id,
  });
  const given: Record<string, unknown> = input;
  const settings = Object.keys(CAMPAIGN_FIELDS).filter(
    (field) => given[field] !== undefined && !isDeepStrictEqual(given[field] ?? null, defaults[field] ?? LEFT_OUT[field] ?? null),
  );
  return ['name', 'agent_id', 'contact_group_id', 'status', ...settings];
}
