import { z } from 'zod';
import {
  PREVIEW_RULES,
  previewDispatch,
  type PreviewRule,
  type DispatchPreview,
  type PreviewedContact,
} from '../../services/campaigns/preview.js';
import { paginationQuery } from '../pagination.js';
import { defineRoute } from '../route.js';
import { datetime, id, iso, isoOrNull } from '../serializers/common.js';

// A dry run of a dispatch, beside v1 (no v1 endpoint changes): totals, and the contacts a page at a time,
// the first to be called first. The service computes it (services/campaigns/preview.ts).

const previewedContact = z.object({
  contact_id: id,
  phone_number: z.string().nullable(),
  call_at: datetime.nullable().describe('When the dialer would call it first; null: never.'),
  blocked_by: z.enum(PREVIEW_RULES).nullable().describe('The rule that holds it back, for good or until blocked_until.'),
  blocked_until: datetime.nullable(),
  detail: z.string().nullable().describe('The region whose law applies, or the consents missing.'),
});

const costEstimate = z
  .object({
    calls: z.number().int().describe('The contacts to call (to_call).'),
    minutes_per_call: z
      .number()
      .describe("Billed minutes expected of each call: the customer's own average over their latest calls, else DIALER_HOLD_MINUTES."),
    basis: z.enum(['history', 'default']).describe('history: the average of history_calls ended calls; default: too few calls yet.'),
    history_calls: z.number().int(),
    rate_cents_per_minute: z.number().int(),
    cost_cents: z.string().describe('calls x the cost of a call of minutes_per_call at the rate (64-bit, as text).'),
    covered: z.boolean().describe('Whether credits_available_cents covers cost_cents.'),
  })
  .meta({ id: 'DispatchCostEstimate' });

const v1DispatchPreview = z.object({
  campaign_id: id,
  from: datetime.describe('The moment judged from: now, or the campaign start when it is ahead.'),
  contacts: z.number().int(),
  to_call: z.number().int().describe('Contacts that would be called, now or later.'),
  callable_now: z.number().int(),
  by_rule: z.record(z.enum(PREVIEW_RULES), z.number().int()).describe('Contacts each rule holds back.'),
  first_call_at: datetime.nullable(),
  credits_needed_cents: z.string().describe('One call per contact to call, of DIALER_HOLD_MINUTES at the call rate (64-bit, as text).'),
  credits_available_cents: z.string(),
  cost_estimate: costEstimate,
  count: z.number().int().describe('Rows in `results` over every page.'),
  results: z.array(previewedContact),
});

const row = (r: PreviewedContact): z.input<typeof previewedContact> => ({
  contact_id: r.contactId,
  phone_number: r.phoneNumber,
  call_at: isoOrNull(r.callAt),
  blocked_by: r.blockedBy,
  blocked_until: isoOrNull(r.blockedUntil),
  detail: r.detail,
});

function toV1Preview(p: DispatchPreview, page: { limit: number; offset: number }): z.input<typeof v1DispatchPreview> {
  return {
    campaign_id: p.campaignId,
    from: iso(p.from),
    contacts: p.contacts,
    to_call: p.toCall,
    callable_now: p.callableNow,
    by_rule: Object.fromEntries(p.byRule.map((r) => [r.rule, r.contacts])) as Record<PreviewRule, number>,
    first_call_at: isoOrNull(p.firstCallAt),
    credits_needed_cents: p.creditsNeededCents.toString(),
    credits_available_cents: p.creditsAvailableCents.toString(),
    cost_estimate: {
      calls: p.costEstimate.calls,
      minutes_per_call: p.costEstimate.secondsPerCall / 60,
      basis: p.costEstimate.basis,
      history_calls: p.costEstimate.historyCalls,
      rate_cents_per_minute: p.costEstimate.rateCentsPerMinute,
      cost_cents: p.costEstimate.costCents.toString(),
      covered: p.costEstimate.covered,
    },
    count: p.rows.length,
    results: p.rows.slice(page.offset, page.offset + page.limit).map(row),
  };
}

export const previewRoutes = [
  defineRoute({
    method: 'GET',
    path: '/campaigns/{id}/preview/',
    operationId: 'previewDispatch',
    summary: 'Dry run of a dispatch: who would be called first and when, who is blocked by which rule until when',
    tag: 'Campaigns',
    params: z.object({ id }),
    query: paginationQuery,
    status: 200,
    response: v1DispatchPreview,
    handler: async ({ params, query }, ctx) => toV1Preview(await previewDispatch(ctx, params.id), query),
  }),
];
