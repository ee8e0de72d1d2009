import * as copies from '../../services/campaigns/copies.js';
import { builder } from '../builder.js';
import { withServiceInput } from '../service-input.js';
import { CallOutcome } from './calls.js';

// New campaigns from another: a clone of its settings, and a redial of the contacts it did not reach.

const CloneCampaignInput = builder.inputType('CloneCampaignInput', {
  fields: (t) => ({
    name: t.string({ description: 'Default: the campaign’s name with " (copy)".' }),
    agentId: t.field({ type: 'UUID', description: 'Another of your active agents; default: the campaign’s.' }),
    contactGroupId: t.field({ type: 'UUID', description: 'Another of your groups; default: the campaign’s.' }),
  }),
});

const RedialCampaignInput = builder.inputType('RedialCampaignInput', {
  fields: (t) => ({
    name: t.string({ description: 'Default: the campaign’s name with " (redial)".' }),
    agentId: t.field({ type: 'UUID', description: 'Another of your active agents; default: the campaign’s.' }),
    outcomes: t.field({
      type: [CallOutcome],
      description: 'Only the contacts whose last call met one of these; left out: every contact called and not reached.',
    }),
  }),
});

builder.prismaObjectFields('Campaign', (t) => ({
  redialOf: t.relation('redialSource', { nullable: true, description: 'The campaign this one redials, if it is a redial.' }),
  redialOutcomes: t.field({
    type: [CallOutcome],
    select: { redialOutcomes: true },
    description: 'With a redial: the outcomes whose contacts it calls; empty: every contact its source did not reach.',
    resolve: (c) => c.redialOutcomes,
  }),
}));

builder.mutationFields((t) => ({
  cloneCampaign: t.prismaField({
    type: 'Campaign',
    description: 'A draft with the campaign’s settings, optionally on another group or agent.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: CloneCampaignInput }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input ?? {}, (input) => copies.cloneCampaign(ctx.service, args.id, input, query)),
  }),
  redialCampaign: t.prismaField({
    type: 'Campaign',
    description:
      'A draft with the campaign’s settings over the contacts of its group it called and did not reach (or whose last call met one of `outcomes`), chosen when the redial starts. No contact is copied or moved.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: RedialCampaignInput }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input ?? {}, (input) => copies.redialCampaign(ctx.service, args.id, input, query)),
  }),
}));
