import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { ValidationError, type FieldErrors } from '../errors.js';
import { uuidv7 } from '../ids.js';
import { parseInput, uuid, type RawInput } from '../validation.js';
import { actFor } from './actor.js';
import { getCampaign } from './campaigns.js';
import { checkVariantAgents } from './references.js';
import { intInRange } from '../calling-rules/schedule.js';
import { lockCampaign, refusal } from './states.js';
import { recordChange, replaceVariants, variantsOf, type CampaignQuery } from './store.js';

// A/B agents: a campaign may run two or more agent variants with weights. Each contact is given one when
// it is enrolled (by a hash of the campaign and the contact, so the same one on every call), and its calls
// go to that variant's agent (from the campaign agent's caller IDs). The report splits its figures by
// variant (results/variants.ts).

export const MAX_VARIANTS = 10;

const variantsInput = z.object({
  variants: z
    .array(
      z.object({
        agent_id: uuid,
        name: z.string().trim().min(1).max(64),
        weight: intInRange(1, 100).describe('Its share, against the sum of the weights.'),
      }),
    )
    .max(MAX_VARIANTS)
    .refine((variants) => variants.length !== 1, { error: 'Give two or more variants, or none to stop A/B testing.' })
    .refine((variants) => new Set(variants.map((v) => v.name.toLowerCase())).size === variants.length, {
      error: 'Give each variant its own name.',
    }),
});

/**
 * Sets the campaign's variants (an empty list removes them). Only before it starts: the contacts are
 * given their variants when they are enrolled, and a split changed midway would compare unlike groups.
 * A new split is an entry of the campaign's history (`variants`, from the old list to the new one); the
 * same split set again changes nothing.
 */
export async function setCampaignVariants<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  id: string,
  raw: RawInput<typeof variantsInput>,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>> {
  await getCampaign(ctx, id, { select: { id: true } });
  const { variants } = parseInput(variantsInput, raw);
  await ctx.sql.transaction(async (tx) => {
    await actFor(tx, ctx);
    const campaign = await lockCampaign(tx, id);
    if (campaign.status !== 'draft' && campaign.status !== 'scheduled') {
      throw refusal(campaign.status, 'Variants are set before the campaign starts.');
    }
    const errors: FieldErrors = {};
    await checkVariantAgents(tx, ctx.user.id, variants, errors);
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    const before = await variantsOf(tx, id);
    const after = variants.map((v) => ({ agent_id: v.agent_id, name: v.name, weight: v.weight }));
    if (isDeepStrictEqual(before, after)) return;
    await replaceVariants(
      tx,
      id,
      variants.map((v) => ({ id: uuidv7(), agentId: v.agent_id, name: v.name, weight: v.weight })),
    );
    await recordChange(tx, id, 'edited', { variants: { from: before, to: after } });
  });
  ctx.events.publish({ kind: 'campaign', campaignId: id });
  return getCampaign(ctx, id, query);
}
