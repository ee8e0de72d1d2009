import { setCampaignVariants } from '../../services/campaigns/variants.js';
import { builder } from '../builder.js';
import { withServiceInput } from '../service-input.js';

// A/B agents: a campaign's variants, each an agent with a weight.

builder.prismaObject('CampaignVariant', {
  description: 'One of a campaign’s A/B agent variants; each contact is given one, by weight, when it is enrolled.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    weight: t.exposeInt('weight'),
    agent: t.relation('agent'),
  }),
});

builder.prismaObjectFields('Campaign', (t) => ({
  variants: t.relation('variants', { query: { orderBy: { position: 'asc' } }, description: 'Its A/B agent variants, if any.' }),
}));

const CampaignVariantInput = builder.inputType('CampaignVariantInput', {
  fields: (t) => ({
    agentId: t.field({ type: 'UUID', required: true, description: 'One of your active agents.' }),
    name: t.string({ required: true, description: '1 to 64 characters, unique in the campaign.' }),
    weight: t.int({ required: true, description: '1 to 100: its share against the sum of the weights.' }),
  }),
});

const SetCampaignVariantsInput = builder.inputType('SetCampaignVariantsInput', {
  fields: (t) => ({
    variants: t.field({ type: [CampaignVariantInput], required: true, description: 'Two to ten; an empty list removes them.' }),
  }),
});

builder.mutationFields((t) => ({
  setCampaignVariants: t.prismaField({
    type: 'Campaign',
    description:
      'Sets a draft or scheduled campaign’s A/B agent variants. Each contact is given one when enrolled, the same on every call; the report splits its figures by variant.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: SetCampaignVariantsInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => setCampaignVariants(ctx.service, args.id, input, query)),
  }),
}));
