import { z } from 'zod';
import { CallOutcome } from '../../generated/prisma/enums.js';
import type { Campaign, Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { ConflictError } from '../errors.js';
import { parseInput, uuid, type RawInput } from '../validation.js';
import { createCampaign, getCampaign } from './campaigns.js';
import { variantsOf, type CampaignQuery } from './store.js';

// New campaigns made from another: a clone (its settings, as a draft, optionally on another group or
// agent), and a redial (its settings, over the contacts of its group it did not reach). Neither copies
// nor moves a contact: a redial enrolls, when it starts, the contacts its source left unreached. Both
// carry the source's A/B split over; a redialed contact keeps the variant its source gave it
// (store.ts, assignVariants).

const cloneInput = z.object({
  name: z.string().trim().min(1).max(255).optional(),
  agent_id: uuid.optional(),
  contact_group_id: uuid.optional(),
});

const redialInput = z.object({
  name: z.string().trim().min(1).max(255).optional(),
  agent_id: uuid.optional(),
  outcomes: z
    .array(z.enum(CallOutcome))
    .max(8)
    .optional()
    .describe('Only contacts whose last call met one of these outcomes; left out: every contact called and not reached.'),
});

/** The source's settings as a new campaign's input: what a user would type again. */
function settingsOf(source: Campaign) {
  return {
    description: source.description,
    concurrent_calls: source.concurrentCalls,
    max_retry_days: source.maxRetryDays,
    calling_hours: source.callingHours,
    schedule_config: source.scheduleConfig,
    active_days: source.activeDays,
    field_mappings: source.fieldMappings,
    selected_contact_fields: source.selectedContactFields,
    timezone: source.timezone,
    call_insights: source.callInsights,
    post_call_analyzers: source.postCallAnalyzers,
    spend_cap_cents: source.spendCapCents,
    required_consent: source.requiredConsent,
    regional_rules: source.regionalRules,
    purpose: source.purpose,
    callSubject: source.callSubject,
  };
}

/** A draft with the campaign's settings, on its group and agent unless others are given (checked as at creation). */
export async function cloneCampaign<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  id: string,
  raw: RawInput<typeof cloneInput>,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>> {
  const input = parseInput(cloneInput, raw);
  const source = await getCampaign(ctx, id);
  return createCampaign(
    ctx,
    {
      ...settingsOf(source),
      name: input.name ?? copyName(source.name, 'copy'),
      agent_id: input.agent_id ?? source.agentId,
      contact_group_id: input.contact_group_id ?? source.contactGroupId,
    },
    query,
    { variants: await splitOf(ctx, source.id) },
  );
}

/**
 * A draft with the campaign's settings over the contacts of its group it called without reaching (or
 * whose last call met one of `outcomes`), chosen when the redial starts. The source may be finished or
 * not; one that has called nobody yet has nobody to redial (409 campaign_draft).
 */
export async function redialCampaign<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  id: string,
  raw: RawInput<typeof redialInput>,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>> {
  const input = parseInput(redialInput, raw);
  const source = await getCampaign(ctx, id);
  if (source.status === 'draft' || source.status === 'scheduled') {
    throw new ConflictError('The campaign has not called anyone yet: there is nobody to redial.', `campaign_${source.status}`);
  }
  return createCampaign(
    ctx,
    {
      ...settingsOf(source),
      name: input.name ?? copyName(source.name, 'redial'),
      agent_id: input.agent_id ?? source.agentId,
      contact_group_id: source.contactGroupId,
    },
    query,
    {
      redial: { redial_of: source.id, redial_outcomes: [...new Set(input.outcomes ?? [])] },
      variants: await splitOf(ctx, source.id),
    },
  );
}

/**
 * The source's A/B split for a copy: its variants but those whose agents were archived since (they can
 * no longer call), and none when fewer than two are left.
 */
async function splitOf(ctx: ServiceContext, sourceId: string) {
  const variants = await variantsOf(ctx.sql, sourceId, { activeOnly: true });
  return variants.length >= 2 ? variants : [];
}

/** "Spring recall (copy)", within the name's 255 characters. */
const copyName = (name: string, what: string) => `${name.slice(0, 255 - what.length - 3)} (${what})`;
