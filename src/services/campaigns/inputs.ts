import { z } from 'zod';
import { isTimeZone } from '../contacts/fields.js';
import { describedAs, int64, jsonObject, uuid, type RawInput } from '../validation.js';
import { activeDays, callingHours, DEFAULT_ACTIVE_DAYS, DEFAULT_CALLING_HOURS, intInRange, scheduleConfig } from './schedule.js';

// What a client may write on a campaign, with the rules of both surfaces: the contract's limits (max
// lengths, the 64-bit range) first, then business ranges. Checks that need the database or the clock
// (ownership, the agent being active, a start in the future) run in campaigns.ts.

const DATETIME_MESSAGE = 'Datetime has wrong format. Use ISO 8601, e.g. 2026-01-31T09:00:00Z.';

/** An ISO 8601 string with a zone (v1) or a Date (GraphQL). */
const instant = describedAs(
  z.union([z.date(), z.iso.datetime({ offset: true }).transform((text) => new Date(text))], { error: DATETIME_MESSAGE }),
  { type: 'string', format: 'date-time' },
);

const timezone = z
  .string()
  .trim()
  .max(64)
  .refine((zone) => zone.length > 64 || isTimeZone(zone), { error: 'Unknown time zone: use an IANA name such as America/New_York.' });

/** The editable fields, without defaults: an update changes only what it names. */
const editable = {
  name: z.string().trim().min(1).max(255),
  description: z.string().max(10_000),
  agentId: uuid,
  contactGroupId: uuid,
  concurrentCalls: intInRange(1, 1000),
  maxRetryDays: intInRange(0, 365),
  callingHours,
  activeDays,
  scheduleConfig,
  fieldMappings: jsonObject,
  selectedContactFields: z.array(z.string().max(255)),
  timezone,
  callInsights: jsonObject,
  postCallAnalyzers: z.array(jsonObject),
  /** The planned start while draft or scheduled; once started, when it started. */
  startedAt: instant.nullable(),
};

const CREATABLE_STATUSES = ['draft', 'scheduled'] as const;

export const createCampaignInput = z.object({
  ...editable,
  description: editable.description.default(''),
  status: z
    .string()
    .max(32)
    .pipe(z.enum(CREATABLE_STATUSES))
    .default('draft')
    .describe('draft (the default) or scheduled, which needs a future started_at.'),
  concurrentCalls: editable.concurrentCalls.default(1),
  maxRetryDays: editable.maxRetryDays.default(0),
  callingHours: callingHours.default(() => ({ ...DEFAULT_CALLING_HOURS })),
  activeDays: activeDays.default(() => [...DEFAULT_ACTIVE_DAYS]),
  scheduleConfig: scheduleConfig.prefault({}),
  fieldMappings: jsonObject.default(() => ({})),
  selectedContactFields: editable.selectedContactFields.default(() => []),
  timezone: timezone.default('UTC'),
  callInsights: jsonObject.default(() => ({})),
  postCallAnalyzers: editable.postCallAnalyzers.default(() => []),
  startedAt: editable.startedAt.optional(),
  // Write-only (v1): checked against the agent and the group, never stored.
  agentName: z.string().max(255).optional(),
  agentPhoneNumber: z.string().max(64).optional(),
  contactGroupName: z.string().max(255).optional(),
  contactGroupTotal: describedAs(int64, { type: 'integer', format: 'int64' }).optional(),
});
export type CreateCampaignInput = RawInput<typeof createCampaignInput>;

export const updateCampaignInput = z.object(editable).partial();
export type UpdateCampaignInput = RawInput<typeof updateCampaignInput>;
