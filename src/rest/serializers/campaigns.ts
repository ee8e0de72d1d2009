import { z } from 'zod';
import { CampaignStatus } from '../../generated/prisma/enums.js';
import type { DispatchResult } from '../../services/campaigns/dispatch.js';
import type { CampaignWithRelations } from '../../services/campaigns/with-relations.js';
import {
  readActiveDays,
  readCallingHours,
  readScheduleConfig,
  RETRYABLE_OUTCOMES,
  RETRYABLE_STATUSES,
  VOICEMAIL_ACTIONS,
  WEEKDAYS,
} from '../../services/calling-rules/schedule.js';
import { v1PhoneNumber } from './agents.js';
import { datetime, id, iso, isoOrNull, json } from './common.js';

// The v1 shape of a campaign (contract 2.2, response columns) with its nested agent and group, and of a
// dispatch result (2.10). calling_hours, active_days and schedule_config are open json in the contract;
// here they are always the effective values, defaults included.

export const v1CallingHours = z
  .object({ start: z.string(), end: z.string() })
  .meta({ id: 'CallingHours', description: 'Local time, HH:MM; end may be 24:00.' });

export const v1ScheduleConfig = z
  .object({
    max_attempts: z.int(),
    max_attempts_per_day: z.int(),
    retry_interval_minutes: z.int(),
    retry_on: z.array(z.enum(RETRYABLE_STATUSES)),
    retry_budgets: z
      .partialRecord(z.enum(RETRYABLE_OUTCOMES), z.object({ max_retries: z.int().optional(), retry_after_minutes: z.int().optional() }))
      .optional()
      .describe('Added: tries again per call outcome, when set.'),
    voicemail: z
      .object({ action: z.enum(VOICEMAIL_ACTIONS), message: z.string().optional() })
      .optional()
      .describe('Added: what a call that meets voicemail does, when set (else it is retried as retry_on says).'),
  })
  .meta({ id: 'ScheduleConfig', description: 'The retry policy.' });

export const v1CampaignAgent = z
  .object({
    id,
    name: z.string(),
    status: z.string(),
    is_active: z.boolean(),
    response_engine_type: z.string(),
    phone_numbers: z.array(v1PhoneNumber),
  })
  .meta({ id: 'CampaignAgent' });

export const v1CampaignContactGroup = z
  .object({
    id,
    name: z.string(),
    description: z.string(),
    total: z.int(),
    csv_headers: z.array(z.string()),
    created_at: datetime,
  })
  .meta({ id: 'CampaignContactGroup' });

export const v1Campaign = z
  .object({
    id,
    name: z.string().max(255),
    description: z.string(),
    status: z.enum(CampaignStatus),
    paused_reason: z.string().nullable(),
    agent_id: id,
    contact_group_id: id,
    concurrent_calls: z.int(),
    max_retry_days: z.int(),
    calling_hours: v1CallingHours,
    schedule_config: v1ScheduleConfig,
    active_days: z.array(z.enum(WEEKDAYS)),
    field_mappings: json,
    selected_contact_fields: json,
    timezone: z.string().max(64),
    call_insights: json,
    post_call_analyzers: z.array(z.record(z.string(), z.unknown())),
    started_at: datetime.nullable(),
    completed_at: datetime.nullable(),
    created_at: datetime,
    updated_at: datetime,
    user_agents: v1CampaignAgent,
    contact_groups: v1CampaignContactGroup,
  })
  .meta({ id: 'Campaign' });

export function toV1Campaign(c: CampaignWithRelations): z.input<typeof v1Campaign> {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    status: c.status,
    paused_reason: c.pausedReason,
    agent_id: c.agentId,
    contact_group_id: c.contactGroupId,
    concurrent_calls: c.concurrentCalls,
    max_retry_days: c.maxRetryDays,
    calling_hours: readCallingHours.fromText(c.callingHours),
    schedule_config: readScheduleConfig.fromText(c.scheduleConfig),
    active_days: readActiveDays.fromText(c.activeDays),
    field_mappings: c.fieldMappings,
    selected_contact_fields: c.selectedContactFields,
    timezone: c.timezone,
    call_insights: c.callInsights,
    post_call_analyzers: c.postCallAnalyzers as Record<string, unknown>[],
    started_at: isoOrNull(c.startedAt),
    completed_at: isoOrNull(c.completedAt),
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
    user_agents: {
      id: c.agent.id,
      name: c.agent.name,
      status: c.agent.status,
      is_active: c.agent.isActive,
      response_engine_type: c.agent.responseEngineType,
      phone_numbers: c.agent.phoneNumbers.map((p) => ({ id: p.id, number: p.number, label: p.label, is_primary: p.isPrimary })),
    },
    contact_groups: {
      id: c.contactGroup.id,
      name: c.contactGroup.name,
      description: c.contactGroup.description,
      total: c.contactGroup.total,
      csv_headers: c.contactGroup.csvHeaders as string[],
      created_at: iso(c.contactGroup.createdAt),
    },
  };
}

export const v1DispatchResult = z
  .object({
    success: z.literal(true),
    campaign_id: id,
    triggered_by: z.string(),
    status: z.enum(['scheduled', 'running']),
    scheduled: z.boolean().describe('True when the campaign waits for its started_at instead of calling now.'),
    calling_begins_at: datetime
      .nullable()
      .describe(
        "When its first call is due (its start, the contacts' retries and callbacks, its calling hours and the callees' local calling rules); null when nobody is left to call.",
      ),
    detail: z
      .string()
      .describe('What happens next: the state (or that the campaign was already running) and, when the first call waits, why.'),
  })
  .meta({ id: 'DispatchResult' });

export function toV1DispatchResult(r: DispatchResult): z.input<typeof v1DispatchResult> {
  return {
    success: true,
    campaign_id: r.campaignId,
    triggered_by: r.triggeredBy,
    status: r.status,
    scheduled: r.scheduled,
    calling_begins_at: isoOrNull(r.callingBeginsAt),
    detail: r.detail,
  };
}
