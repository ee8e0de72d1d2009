import { z } from 'zod';
import { camelCase, type CamelCase } from '../../key-case.js';
import {
  CallOutcome,
  DialBlockReason,
  type CallStatus,
  type Campaign,
  type Prisma,
  type Sentiment,
} from '../../generated/prisma/client.js';
import { getCampaign } from '../campaigns/campaigns.js';
import { revocationStops } from '../calling-rules/revocation.js';
import type { ServiceContext, ServiceEnv } from '../context.js';
import { parseInput, type RawInput } from '../validation.js';
import { EXPORT_BATCH } from './calls.js';
import * as store from './store.js';
import { compareVariants, variantMetrics, type VariantComparison, type VariantMetrics } from './variants.js';
import type { CallAttemptQuery, CallGroup, ContactOutcomeRow } from './store.js';

// A campaign's report, the same on both surfaces. Every figure is computed by the database: the calls,
// dial states, appointments, blocks, callbacks and variants from running totals that triggers keep in step
// with every change (so a report costs the same on a campaign of any size), the contacts over indexed
// columns; no attempt is loaded to be counted. The statements run side by side, so on a busy campaign two
// figures may be a few milliseconds apart.

/** How many of the latest completed calls a report shows. */
export const RECENT_SUCCESSFUL_CALLS = 10;

/** Paging of a report's contact outcomes: v1's rules (default 50, above 500 counts as 500). */
export const reportPageInput = z.object({
  limit: z
    .int()
    .min(1)
    .transform((n) => Math.min(n, 500))
    .default(50),
  offset: z.int().min(0).default(0),
});
export type ReportPage = RawInput<typeof reportPageInput>;

/** Call statuses as metric field names. */
const STATUS_FIELD = {
  queued: 'queued',
  ringing: 'ringing',
  in_progress: 'inProgress',
  completed: 'completed',
  no_answer: 'noAnswer',
  busy: 'busy',
  failed: 'failed',
  voicemail: 'voicemail',
  canceled: 'canceled',
} as const satisfies Record<CallStatus, string>;

export type CallCounts = { total: number } & Record<(typeof STATUS_FIELD)[CallStatus], number>;
export type SentimentCounts = Record<Sentiment, number>;

export interface ContactCounts {
  /** Contacts in the campaign's group now, and those it enrolled that were erased since. */
  total: number;
  /** Of those, the ones that may be called (status active). */
  callable: number;
  /** Contacts the campaign dialed at least once. */
  attempted: number;
  /** Contacts with the final outcome `reached`. */
  reached: number;
  /** Contacts of the group without a final outcome: not dispatched yet, waiting for a retry, or on a call. */
  pending: number;
}

export interface CampaignMetrics {
  contacts: ContactCounts;
  calls: CallCounts;
  /** reached / attempted contacts, 0 to 1 (4 decimals); 0 before anyone was dialed. */
  successRate: number;
  /** Mean length of the calls that connected (duration above 0), 1 decimal. */
  averageDurationSeconds: number;
  totalDurationSeconds: number;
  totalCostCents: bigint;
  /** Appointments booked from the campaign's calls, whatever became of them since. */
  appointmentsBooked: number;
  /** Sentiment of the completed calls (conversations). */
  sentiment: SentimentCounts;
  /** With A/B variants: the figures of each, in their order; empty without. */
  variants: VariantMetrics[];
  /** Whether the two variants that called the most differ significantly in the share reached. */
  variantComparison: VariantComparison | null;
  /** Callbacks callees asked for during calls, and those still to make. */
  callbacks: { requested: number; pending: number };
  /** Finished calls by outcome, whichever provider placed them. */
  outcomes: OutcomeCounts;
  /** Calls not placed because a compliance rule stopped them, by reason (a contact waiting may count more than once). */
  blocked: BlockedCounts;
}

/** Counts keyed by each of an enum's values under its camelCase name, as the metrics show them (GraphQL and v1). */
export type CountsOf<V extends string> = { [K in V as CamelCase<K>]: number };

export type OutcomeCounts = CountsOf<CallOutcome>;
export type BlockedCounts = { total: number } & CountsOf<DialBlockReason>;

/** 0 for every value, then the counts the rows give. */
function countsOf<V extends string>(values: readonly V[], rows: { value: V; count: number }[]): CountsOf<V> {
  const counts: Record<string, number> = Object.fromEntries(values.map((v) => [camelCase(v), 0]));
  for (const row of rows) counts[camelCase(row.value)] = row.count;
  return counts as CountsOf<V>;
}

/** Where one contact of the campaign's group stands. */
export type ContactOutcome = ContactOutcomeRow;

export interface CampaignReport {
  campaign: Campaign;
  metrics: CampaignMetrics;
  contactOutcomes: ContactOutcome[];
  totalContactOutcomes: number;
  hasMoreContactOutcomes: boolean;
  limit: number;
  offset: number;
}

/** Metrics of a campaign and one page of its contacts' outcomes (in the order the contacts were added). */
export async function getCampaignReport(ctx: ServiceContext, campaignId: string, rawPage: ReportPage = {}): Promise<CampaignReport> {
  const page = parseInput(reportPageInput, rawPage);
  const { contactGroup, ...campaign } = await getCampaign(ctx, campaignId, { include: { contactGroup: { select: { total: true } } } });
  const [
    uncallable,
    gone,
    { attempted, reached, done },
    callGroups,
    { appointments: appointmentsBooked, callbacks },
    contactOutcomes,
    blocks,
    outcomes,
    variantRows,
  ] = await Promise.all([
    // The group keeps its total in step with its contacts; the few that may not be called are counted
    // in the (group, status) index, which spares a scan of every contact.
    store.countUncallableContacts(ctx, campaign),
    // Erased contacts are out of the group's total and in the count above; those this campaign enrolled
    // are still part of its report, as anonymous rows.
    store.countErasedContacts(ctx, campaign),
    store.countDialStates(ctx, campaign),
    store.sumCallsByStatus(ctx, campaign),
    store.countAppointmentsAndCallbacks(ctx, campaign),
    store.findContactOutcomes(ctx, campaign, page),
    store.countBlocksByReason(ctx, campaign),
    store.countCallsByOutcome(ctx, campaign),
    store.variantFigures(ctx, campaign),
  ]);
  const variants = variantMetrics(variantRows);
  const total = contactGroup.total + gone.enrolled;
  const notCallable = uncallable - gone.uncallable + gone.enrolledUncallable;
  // A contact moved to another group after its outcome keeps counting for this campaign, so `done` may
  // exceed what is left of the group.
  const contacts = { total, callable: total - notCallable, attempted, reached, pending: Math.max(total - done, 0) };
  return {
    campaign,
    metrics: {
      ...callMetrics(callGroups),
      contacts,
      successRate: ratio(reached, attempted, 4),
      appointmentsBooked,
      outcomes: countsOf(
        Object.values(CallOutcome),
        outcomes.map((o) => ({ value: o.outcome, count: o.calls })),
      ),
      callbacks,
      variants,
      variantComparison: compareVariants(variants),
      blocked: {
        total: blocks.reduce((sum, b) => sum + b.count, 0),
        ...countsOf(
          Object.values(DialBlockReason),
          blocks.map((b) => ({ value: b.reason, count: b.count })),
        ),
      },
    },
    contactOutcomes,
    totalContactOutcomes: total,
    hasMoreContactOutcomes: page.offset + contactOutcomes.length < total,
    limit: page.limit,
    offset: page.offset,
  };
}

/**
 * The longest time, in seconds, between a revocation (a consent revoked, a do-not-call request) and the
 * last of the campaign's calls placed after it to the person, among the revocations whose scope covers the
 * campaign's calls (calling-rules/revocation.ts); 0 when none was followed by a call, as the gate ensures
 * for every revocation. The law allows 10 business days (FCC 24-24).
 */
export async function longestRevocationLagSeconds(ctx: ServiceContext, campaignId: string): Promise<number> {
  const campaign = await getCampaign(ctx, campaignId, { select: { id: true, requiredConsent: true } });
  const lags = (await store.callsAfterRevocations(ctx, campaign))
    .filter((row) => row.kind === null || revocationStops({ kind: row.kind, at: row.at }, campaign.requiredConsent))
    .map((row) => (row.placedAt.getTime() - row.at.getTime()) / 1000);
  return Math.max(0, ...lags);
}

/**
 * Every contact outcome of the campaign's report, in the report's order, in batches read one after the
 * other, for exports of any size. The campaign's ownership is checked before the first.
 */
export async function* contactOutcomeBatches(ctx: ServiceContext, campaignId: string): AsyncGenerator<ContactOutcome[]> {
  const campaign = await getCampaign(ctx, campaignId);
  // Each batch goes on from the last one's key: an offset would skip every earlier contact again.
  let after: { addedAt: Date; contactId: string } | null = null;
  for (;;) {
    const batch = await store.findContactOutcomesAfter(ctx, campaign, EXPORT_BATCH, after);
    if (batch.length > 0) yield batch.map(({ addedAt: _, ...outcome }) => outcome);
    if (batch.length < EXPORT_BATCH) return;
    const last = batch.at(-1)!;
    after = { addedAt: last.addedAt, contactId: last.contactId };
  }
}

/**
 * Folds the rows of the report totals, which grow by one per statement that changes calls or dial states,
 * into one per campaign (and status): the dialer's sweep does it now and then.
 */
export function foldReportTotals(env: ServiceEnv): Promise<void> {
  return store.foldReportTotals(env.sql);
}

/** Folds the per-status aggregates, one row per status, into the call metrics. */
function callMetrics(
  groups: CallGroup[],
): Omit<
  CampaignMetrics,
  'contacts' | 'successRate' | 'appointmentsBooked' | 'blocked' | 'outcomes' | 'callbacks' | 'variants' | 'variantComparison'
> {
  const calls = Object.fromEntries([['total', 0], ...Object.values(STATUS_FIELD).map((field) => [field, 0])]) as CallCounts;
  const completed = groups.find((group) => group.status === 'completed');
  const sentiment: SentimentCounts = {
    positive: completed?.positive ?? 0,
    neutral: completed?.neutral ?? 0,
    negative: completed?.negative ?? 0,
    unknown: completed?.unknown ?? 0,
  };
  let totalDurationSeconds = 0;
  let connected = 0;
  let totalCostCents = 0n;
  for (const group of groups) {
    calls.total += group.calls;
    calls[STATUS_FIELD[group.status]] += group.calls;
    totalDurationSeconds += Number(group.durationSeconds);
    connected += group.connected;
    totalCostCents += group.costCents;
  }
  return {
    calls,
    sentiment,
    totalDurationSeconds,
    averageDurationSeconds: ratio(totalDurationSeconds, connected, 1),
    totalCostCents,
  };
}

const ratio = (part: number, whole: number, decimals: number) =>
  whole === 0 ? 0 : Math.round((part / whole) * 10 ** decimals) / 10 ** decimals;

/** The campaign's latest completed calls, newest first; `query` carries the relations a caller wants. */
export function listRecentSuccessfulCalls<Q extends CallAttemptQuery = {}>(
  ctx: ServiceContext,
  campaignId: string,
  query: Q = {} as Q,
): Promise<Prisma.CallAttemptGetPayload<Q>[]> {
  return store.findRecentCompletedCalls(ctx, campaignId, RECENT_SUCCESSFUL_CALLS, query);
}
