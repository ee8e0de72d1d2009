import { z } from 'zod';
import { JsonText } from '../../http/json-text.js';
import { createCampaign } from '../../services/campaigns/campaigns.js';
import { dispatchCampaign, dispatchInput } from '../../services/campaigns/dispatch.js';
import { createCampaignInput } from '../../services/campaigns/inputs.js';
import { getCampaignAsV1Json, getCampaignWithRelations, listCampaignsAsV1Json } from '../../services/campaigns/with-relations.js';
import { DISPATCH_REFUSALS } from '../../services/campaigns/states.js';
import { ConflictError, reasonList } from '../../services/errors.js';
import { INSTANT_RANGE_MESSAGE, isStorableInstant } from '../../services/input-safety.js';
import { fromJsonText } from '../forms.js';
import { MAX_LIMIT, paginationQuery } from '../pagination.js';
import { defineRoute } from '../route.js';
import { toV1Campaign, toV1DispatchResult, v1Campaign, v1DispatchResult } from '../serializers/campaigns.js';
import { id } from '../serializers/common.js';

// The v1 campaign endpoints. The create body is the contract's request columns of 2.2, read with the
// service's own field rules (so the OpenAPI document states them); the service checks the rest.

const f = createCampaignInput.shape;

/** A list field sent as one plain value (a form with one box ticked) is a list of that value. */
const oneOrMore = <S extends z.ZodType>(schema: S) =>
  fromJsonText(z.preprocess((value) => (typeof value === 'string' || typeof value === 'number' ? [value] : value), schema));

// The service's own fields under their own names; v1 only adds how a form or a JSON text carries them.
const createBody = z
  .object({
    ...f,
    calling_hours: fromJsonText(f.calling_hours),
    schedule_config: fromJsonText(f.schedule_config),
    active_days: oneOrMore(f.active_days).describe('Day names (mon or monday, any case) or ISO numbers 1 (Monday) to 7.'),
    field_mappings: fromJsonText(f.field_mappings),
    selected_contact_fields: oneOrMore(f.selected_contact_fields),
    call_insights: fromJsonText(f.call_insights),
    post_call_analyzers: fromJsonText(f.post_call_analyzers),
    // A blank form field means no planned start, as DRF reads an empty date. The service's own rules do
    // not bound a start in the future, so the instants every date input accepts are checked here.
    started_at: z
      .preprocess(
        (value) => (value === '' ? null : value),
        f.started_at.refine((date) => !date || isStorableInstant(date), { error: INSTANT_RANGE_MESSAGE }),
      )
      .describe('Planned start; must be in the future.'),
    completed_at: z.unknown().optional().meta({ readOnly: true, description: 'Read-only: ignored; set when the campaign completes.' }),
  })
  .meta({ id: 'CampaignRequest' });

const listQuery = z.object({
  limit: paginationQuery.shape.limit
    .unwrap()
    .optional()
    .describe(`Page size (values above ${MAX_LIMIT} count as ${MAX_LIMIT}); without it, every campaign.`),
  offset: paginationQuery.shape.offset,
});

const byId = z.object({ id });

/** A refused dispatch: the dispatch result's own fields beside the refusal's reason and detail. */
const v1DispatchRefusal = z
  .object({
    success: z.literal(false),
    campaign_id: id,
    triggered_by: z.string(),
    reason: z.string().describe(`${reasonList(DISPATCH_REFUSALS)}; rarely campaign_changed (try again).`),
    detail: z.string(),
  })
  .meta({ id: 'DispatchRefusal' });

export const campaignRoutes = [
  defineRoute({
    method: 'POST',
    path: '/contacts/contacts/',
    operationId: 'createCampaign',
    summary: 'Create a campaign (draft, or scheduled with a future started_at)',
    tag: 'Campaigns',
    body: createBody,
    example: {
      name: 'Spring renewals, Denver',
      description: 'Reminds members whose plan renews in April and books a review call.',
      agent_id: '3f0c6f8e-2b7d-4c1a-9a57-6d1f0b8e4a21',
      contact_group_id: '9b2e4d10-7c55-4e8f-8a3b-1d6f2c9e7b40',
      concurrent_calls: 5,
      max_retry_days: 3,
      calling_hours: { start: '09:00', end: '17:30' },
      active_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      timezone: 'America/Denver',
      schedule_config: { max_attempts: 3, retry_interval_minutes: 120 },
      spend_cap_cents: 25_000,
      purpose: 'informational',
    },
    status: 201,
    response: v1Campaign,
    handler: async ({ body: { completed_at, ...input } }, ctx) => {
      const created = await createCampaign(ctx, input, { select: { id: true } });
      return toV1Campaign(await getCampaignWithRelations(ctx, created.id));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/campaigns/',
    operationId: 'listCampaigns',
    summary: 'List campaigns, newest first',
    tag: 'Campaigns',
    query: listQuery,
    status: 200,
    response: z.array(v1Campaign),
    handler: async ({ query }, ctx) => new JsonText(await listCampaignsAsV1Json(ctx, { take: query.limit, skip: query.offset })),
  }),
  defineRoute({
    method: 'GET',
    path: '/campaigns/{id}/',
    operationId: 'getCampaign',
    summary: 'Get a campaign',
    tag: 'Campaigns',
    params: byId,
    status: 200,
    response: v1Campaign,
    handler: async ({ params }, ctx) => new JsonText(await getCampaignAsV1Json(ctx, params.id)),
  }),
  defineRoute({
    method: 'POST',
    path: '/campaigns/{id}/dispatch/',
    operationId: 'dispatchCampaign',
    summary: 'Start, schedule or resume a campaign',
    tag: 'Campaigns',
    rateLimit: 'dispatch',
    params: byId,
    body: z.object({ triggered_by: dispatchInput.shape.triggeredBy.describe('Who or what asked; echoed back (default "api").') }),
    example: { triggered_by: 'crm-nightly-sync' },
    status: 202,
    response: v1DispatchResult,
    errors: { 409: { description: 'Refused: the campaign cannot be dispatched (see reason).', body: v1DispatchRefusal } },
    handler: async ({ params, body }, ctx) => {
      try {
        return toV1DispatchResult(await dispatchCampaign(ctx, params.id, { triggeredBy: body.triggered_by }));
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        // The refusal's reason and detail are added as every conflict's are (http/errors.ts).
        const refusal: Omit<z.input<typeof v1DispatchRefusal>, 'reason' | 'detail'> = {
          success: false,
          campaign_id: params.id,
          triggered_by: body.triggered_by,
        };
        throw new ConflictError(error.message, error.reason, refusal);
      }
    },
  }),
];
