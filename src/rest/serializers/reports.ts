import { z } from 'zod';
import { camelCase } from '../../key-case.js';
import { CallOutcome, CampaignStatus, ContactStatus, DialBlockReason } from '../../generated/prisma/enums.js';
import type { CampaignReport, ContactOutcome } from '../../services/results/reports.js';
import { v1CallHistoryItem } from './calls.js';
import { datetime, id, iso, isoOrNull } from './common.js';

// The v1 campaign report (contract 2.7). The contract leaves the inner shapes open; they are camelCase
// like the report itself, and `metrics` has the same fields as CampaignMetrics on GraphQL.

const count = z.int().min(0);

export const v1ReportCampaign = z
  .object({
    id,
    name: z.string(),
    description: z.string(),
    status: z.enum(CampaignStatus),
    pausedReason: z.string().nullable(),
    agentId: id,
    contactGroupId: id,
    startedAt: datetime.nullable(),
    completedAt: datetime.nullable(),
    createdAt: datetime,
    updatedAt: datetime,
  })
  .meta({ id: 'ReportCampaign' });

/** A count for each of an enum's values, under its camelCase name (the report's own CountsOf). */
const countsOf = (values: readonly string[]) => Object.fromEntries(values.map((value) => [camelCase(value), count]));

export const v1ReportMetrics = z
  .object({
    contacts: z.object({
      total: count.describe('Contacts in the campaign’s group.'),
      callable: count.describe('Of those, the ones that may be called (status active).'),
      attempted: count.describe('Contacts dialed at least once.'),
      reached: count.describe('Contacts whose final outcome is reached.'),
      pending: count.describe('Contacts of the group without a final outcome yet.'),
    }),
    calls: z.object({
      total: count,
      queued: count,
      ringing: count,
      inProgress: count,
      completed: count,
      noAnswer: count,
      busy: count,
      failed: count,
      voicemail: count,
      canceled: count,
    }),
    successRate: z.number().min(0).max(1).describe('Reached contacts divided by attempted contacts (0 when none was attempted).'),
    averageDurationSeconds: z.number().min(0).describe('Mean length of the calls that connected.'),
    totalDurationSeconds: count,
    totalCostCents: count,
    appointmentsBooked: count,
    sentiment: z.object({ positive: count, neutral: count, negative: count, unknown: count }).describe('Sentiment of the completed calls.'),
    variants: z
      .array(
        z.object({
          variantId: id,
          name: z.string(),
          agentId: id,
          weight: count,
          contacts: count,
          attempted: count,
          reached: count,
          reachRate: z.number(),
          appointments: count,
          calls: count,
          averageDurationSeconds: z.number(),
          costCents: count,
        }),
      )
      .describe('Added: with A/B variants, each one’s figures (empty without).'),
    variantComparison: z
      .object({ variants: z.array(id), zScore: z.number(), pValue: z.number(), significant: z.boolean(), statement: z.string() })
      .nullable()
      .describe('Added: a two-proportion z-test at 95% of the share reached between the two variants that called the most.'),
    callbacks: z
      .object({ requested: count, pending: count })
      .describe('Added: callbacks callees asked for during calls, and those not made yet.'),
    outcomes: z
      .object(countsOf(Object.values(CallOutcome)))
      .describe('Added: the finished calls by outcome (human, voicemail, ivr, callScreening, noAnswer, busy, failed, invalidNumber).'),
    blocked: z
      .object({ total: count, ...countsOf(Object.values(DialBlockReason)) })
      .describe('Added: calls not placed because a compliance rule stopped them, by reason.'),
  })
  .meta({ id: 'ReportMetrics' });

export const v1ContactOutcome = z
  .object({
    contactId: id,
    contactName: z.string(),
    phoneNumber: z.string().nullable(),
    contactStatus: z.enum(ContactStatus),
    attempts: count,
    lastStatus: z.string().nullable().describe('Status of the latest call; null before the first.'),
    lastCallAt: datetime.nullable(),
    outcome: z.string().describe('reached, not_reached, do_not_call, consent_missing, invalid or cancelled once final; pending before.'),
  })
  .meta({ id: 'ContactOutcome' });

export const v1CampaignReport = z
  .object({
    campaign: v1ReportCampaign,
    metrics: v1ReportMetrics,
    recentSuccessfulCalls: z.array(v1CallHistoryItem).describe('The latest completed calls, newest first (at most 10).'),
    contactOutcomes: z.array(v1ContactOutcome).describe('One per contact of the group, in the order they were added.'),
    totalContactOutcomes: count,
    hasMoreContactOutcomes: z.boolean(),
    limit: z.int(),
    offset: z.int(),
  })
  .meta({ id: 'CampaignReport' });

export function toV1ContactOutcome(outcome: ContactOutcome): z.input<typeof v1ContactOutcome> {
  return { ...outcome, lastCallAt: isoOrNull(outcome.lastCallAt) };
}

export function toV1CampaignReport(
  report: CampaignReport,
  recentSuccessfulCalls: z.input<typeof v1CallHistoryItem>[],
): z.input<typeof v1CampaignReport> {
  const { campaign, metrics } = report;
  return {
    campaign: {
      id: campaign.id,
      name: campaign.name,
      description: campaign.description,
      status: campaign.status,
      pausedReason: campaign.pausedReason,
      agentId: campaign.agentId,
      contactGroupId: campaign.contactGroupId,
      startedAt: isoOrNull(campaign.startedAt),
      completedAt: isoOrNull(campaign.completedAt),
      createdAt: iso(campaign.createdAt),
      updatedAt: iso(campaign.updatedAt),
    },
    // Costs stay far below 2^53 cents (the ledger's ceiling on credits), so Number() is exact.
    metrics: {
      ...metrics,
      totalCostCents: Number(metrics.totalCostCents),
      variants: metrics.variants.map((v) => ({ ...v, costCents: Number(v.costCents) })),
    },
    recentSuccessfulCalls,
    contactOutcomes: report.contactOutcomes.map(toV1ContactOutcome),
    totalContactOutcomes: report.totalContactOutcomes,
    hasMoreContactOutcomes: report.hasMoreContactOutcomes,
    limit: report.limit,
    offset: report.offset,
  };
}
