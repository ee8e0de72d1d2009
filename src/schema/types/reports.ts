import { CallOutcome, DialBlockReason } from '../../generated/prisma/enums.js';
import { camelCase } from '../../key-case.js';
import * as reports from '../../services/results/reports.js';
import type { VariantComparison, VariantMetrics } from '../../services/results/variants.js';
import { builder, type SchemaTypes } from '../builder.js';
import { withoutNulls } from '../inputs.js';
import { ContactStatus } from './contacts.js';

// A campaign's report as typed objects; the figures come from the same service as v1's report.

const ContactCounts = builder.objectRef<reports.ContactCounts>('CampaignContactCounts').implement({
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'Contacts in the campaign’s group.' }),
    callable: t.exposeInt('callable', { description: 'Of those, the ones that may be called (status active).' }),
    attempted: t.exposeInt('attempted', { description: 'Contacts dialed at least once.' }),
    reached: t.exposeInt('reached', { description: 'Contacts whose final outcome is reached.' }),
    pending: t.exposeInt('pending', { description: 'Contacts of the group without a final outcome yet.' }),
  }),
});

const CallCounts = builder.objectRef<reports.CallCounts>('CallStatusCounts').implement({
  description: 'Calls by status.',
  fields: (t) => ({
    total: t.exposeInt('total'),
    queued: t.exposeInt('queued'),
    ringing: t.exposeInt('ringing'),
    inProgress: t.exposeInt('inProgress'),
    completed: t.exposeInt('completed'),
    noAnswer: t.exposeInt('noAnswer'),
    busy: t.exposeInt('busy'),
    failed: t.exposeInt('failed'),
    voicemail: t.exposeInt('voicemail'),
    canceled: t.exposeInt('canceled'),
  }),
});

const SentimentCounts = builder.objectRef<reports.SentimentCounts>('SentimentCounts').implement({
  description: 'Completed calls by sentiment.',
  fields: (t) => ({
    positive: t.exposeInt('positive'),
    neutral: t.exposeInt('neutral'),
    negative: t.exposeInt('negative'),
    unknown: t.exposeInt('unknown'),
  }),
});

/** An Int field for each of an enum's values, under its camelCase name, reading the count the metrics keep there. */
function countFields<P extends Record<string, number>>(t: PothosSchemaTypes.ObjectFieldBuilder<SchemaTypes, P>, values: readonly string[]) {
  return Object.fromEntries(
    values.map((value) => {
      const name = camelCase(value);
      return [name, t.int({ resolve: (counts) => counts[name]! })];
    }),
  );
}

const OutcomeCounts = builder.objectRef<reports.OutcomeCounts>('OutcomeCounts').implement({
  description: 'The finished calls by outcome, whichever provider placed them.',
  fields: (t) => countFields(t, Object.values(CallOutcome)),
});

const VariantMetricsType = builder.objectRef<VariantMetrics>('VariantMetrics').implement({
  description: 'One A/B variant’s figures: its contacts, those called and reached, appointments, talk time and cost.',
  fields: (t) => ({
    variantId: t.expose('variantId', { type: 'UUID' }),
    name: t.exposeString('name'),
    agentId: t.expose('agentId', { type: 'UUID' }),
    weight: t.exposeInt('weight'),
    contacts: t.exposeInt('contacts'),
    attempted: t.exposeInt('attempted'),
    reached: t.exposeInt('reached'),
    reachRate: t.exposeFloat('reachRate', { description: 'reached / attempted, 0 to 1.' }),
    appointments: t.exposeInt('appointments'),
    calls: t.exposeInt('calls'),
    averageDurationSeconds: t.exposeFloat('averageDurationSeconds'),
    costCents: t.expose('costCents', { type: 'BigInt' }),
  }),
});

const VariantComparisonType = builder.objectRef<VariantComparison>('VariantComparison').implement({
  description: 'A two-proportion z-test at 95% of the share reached, between the two variants that called the most contacts.',
  fields: (t) => ({
    variants: t.field({ type: ['UUID'], description: 'The higher reach rate first.', resolve: (c) => c.variants }),
    zScore: t.exposeFloat('zScore'),
    pValue: t.exposeFloat('pValue'),
    significant: t.exposeBoolean('significant'),
    statement: t.exposeString('statement'),
  }),
});

const CallbackCounts = builder.objectRef<reports.CampaignMetrics['callbacks']>('CallbackCounts').implement({
  description: 'Callbacks callees asked for during calls (requested), and those not made yet (pending).',
  fields: (t) => ({ requested: t.exposeInt('requested'), pending: t.exposeInt('pending') }),
});

const BlockedCounts = builder.objectRef<reports.BlockedCounts>('BlockedCounts').implement({
  description:
    'Calls not placed because a compliance rule stopped them, by reason; a contact kept waiting by a regional rule counts once each time.',
  fields: (t) => ({
    total: t.exposeInt('total'),
    ...countFields(t, Object.values(DialBlockReason)),
  }),
});

const CampaignMetrics = builder.objectRef<reports.CampaignMetrics>('CampaignMetrics').implement({
  fields: (t) => ({
    contacts: t.field({ type: ContactCounts, resolve: (m) => m.contacts }),
    calls: t.field({ type: CallCounts, resolve: (m) => m.calls }),
    successRate: t.exposeFloat('successRate', {
      description: 'Reached contacts divided by attempted contacts, 0 to 1 (0 when none was attempted).',
    }),
    averageDurationSeconds: t.exposeFloat('averageDurationSeconds', { description: 'Mean length of the calls that connected.' }),
    totalDurationSeconds: t.exposeInt('totalDurationSeconds'),
    totalCostCents: t.expose('totalCostCents', { type: 'BigInt' }),
    appointmentsBooked: t.exposeInt('appointmentsBooked', { description: 'Appointments booked from the campaign’s calls.' }),
    sentiment: t.field({ type: SentimentCounts, resolve: (m) => m.sentiment }),
    outcomes: t.field({ type: OutcomeCounts, resolve: (m) => m.outcomes }),
    callbacks: t.field({ type: CallbackCounts, resolve: (m) => m.callbacks }),
    variants: t.field({ type: [VariantMetricsType], description: 'With A/B variants: each one’s figures.', resolve: (m) => m.variants }),
    variantComparison: t.field({ type: VariantComparisonType, nullable: true, resolve: (m) => m.variantComparison }),
    blocked: t.field({ type: BlockedCounts, resolve: (m) => m.blocked }),
  }),
});

const ContactOutcome = builder.objectRef<reports.ContactOutcome>('ContactOutcome').implement({
  description: 'Where one contact of the campaign’s group stands.',
  fields: (t) => ({
    contactId: t.expose('contactId', { type: 'UUID' }),
    contactName: t.exposeString('contactName'),
    phoneNumber: t.exposeString('phoneNumber', { nullable: true }),
    contactStatus: t.expose('contactStatus', { type: ContactStatus }),
    attempts: t.exposeInt('attempts'),
    lastStatus: t.exposeString('lastStatus', { nullable: true, description: 'Status of the latest call; null before the first.' }),
    lastCallAt: t.expose('lastCallAt', { type: 'DateTime', nullable: true }),
    outcome: t.exposeString('outcome', {
      description: 'reached, not_reached, do_not_call, consent_missing, invalid or cancelled once final; pending before.',
    }),
  }),
});

const CampaignReport = builder.objectRef<reports.CampaignReport>('CampaignReport').implement({
  fields: (t) => ({
    metrics: t.field({ type: CampaignMetrics, resolve: (r) => r.metrics }),
    recentSuccessfulCalls: t.prismaField({
      type: ['CallAttempt'],
      description: `The latest completed calls, newest first (at most ${reports.RECENT_SUCCESSFUL_CALLS}).`,
      resolve: (query, report, _args, ctx) => reports.listRecentSuccessfulCalls(ctx.service, report.campaign.id, query),
    }),
    contactOutcomes: t.field({
      type: [ContactOutcome],
      description: 'One page of the group’s contacts, in the order they were added.',
      resolve: (r) => r.contactOutcomes,
    }),
    longestRevocationLagSeconds: t.float({
      description:
        'The longest time between a revocation (a consent revoked by any means, a do-not-call request) and the last of this campaign’s calls placed after it to that person; 0 when every revocation took effect at once.',
      resolve: (r, _args, ctx) => reports.longestRevocationLagSeconds(ctx.service, r.campaign.id),
    }),
    totalContactOutcomes: t.exposeInt('totalContactOutcomes'),
    hasMoreContactOutcomes: t.exposeBoolean('hasMoreContactOutcomes'),
    limit: t.exposeInt('limit', { description: 'Page size applied.' }),
    offset: t.exposeInt('offset', { description: 'Offset applied.' }),
  }),
});

builder.prismaObjectFields('Campaign', (t) => ({
  report: t.field({
    type: CampaignReport,
    description: 'Metrics, the latest completed calls and a page of per-contact outcomes (the same as v1’s report).',
    args: {
      limit: t.arg.int({ defaultValue: 50, description: 'Contact outcomes per page (values above 500 count as 500).' }),
      offset: t.arg.int({ defaultValue: 0 }),
    },
    select: { id: true },
    resolve: (campaign, args, ctx) => reports.getCampaignReport(ctx.service, campaign.id, withoutNulls(args)),
  }),
}));
