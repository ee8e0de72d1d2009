import * as exemptions from '../../services/campaigns/exemptions.js';
import { builder } from '../builder.js';
import { withServiceInput } from '../service-input.js';

// Exemptions from the regional calling rules: granted by admins, read by admins and by their customer,
// and named on every call placed under one.

builder.prismaObject('RegionalRuleExemption', {
  description:
    'An admin’s permission for a customer’s campaigns to turn the regional rules off (regionalRules: false) until it expires; the rules apply again from then.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    userId: t.expose('userId', { type: 'UUID', description: 'The customer it is for.' }),
    grantedBy: t.exposeString('grantedBy', { description: 'The admin who granted it (their user id).' }),
    reason: t.exposeString('reason'),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'When it stops applying.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was granted.' }),
  }),
});

builder.prismaObjectFields('CallAttempt', (t) => ({
  regionalRuleExemption: t.relation('regionalRuleExemption', {
    nullable: true,
    description: 'The exemption this call went out under, with the regional rules off; null when they applied.',
  }),
}));

const GrantRegionalRuleExemptionInput = builder.inputType('GrantRegionalRuleExemptionInput', {
  fields: (t) => ({
    userId: t.field({ type: 'UUID', required: true, description: 'The customer it is for.' }),
    reason: t.string({ required: true, description: 'Why the regional rules do not cover these calls (1 to 1000 characters).' }),
    expiresAt: t.field({ type: 'DateTime', required: true, description: 'When it stops applying: in the future, at most 366 days ahead.' }),
  }),
});

builder.mutationFields((t) => ({
  grantRegionalRuleExemption: t.prismaField({
    type: 'RegionalRuleExemption',
    description: 'Administrators: let a customer’s campaigns turn the regional rules off until a given time, recorded with who and why.',
    authScopes: { admin: true },
    args: { input: t.arg({ type: GrantRegionalRuleExemptionInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => exemptions.grantExemption(ctx.service, input, query)),
  }),
}));

builder.queryFields((t) => ({
  regionalRuleExemptions: t.prismaField({
    type: ['RegionalRuleExemption'],
    description: 'A customer’s exemptions from the regional rules, latest to expire first: your own, or (administrators) any customer’s.',
    authScopes: { authenticated: true },
    args: { userId: t.arg({ type: 'UUID', description: 'Administrators: the customer; default: you.' }) },
    resolve: (query, _root, args, ctx) => exemptions.listExemptions(ctx.service, args.userId ?? undefined, query),
  }),
}));
