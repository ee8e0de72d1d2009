import { resolveArrayConnection } from '@pothos/plugin-relay';
import * as preview from '../../services/campaigns/preview.js';
import { builder } from '../builder.js';

// The dry run of a dispatch (services/campaigns/preview.ts): its totals, and its contacts as a
// connection, the first to be called first.

const PreviewRuleEnum = builder.enumType('PreviewRule', {
  description:
    'What holds a contact back: do_not_call, consent_missing and invalid for good; the regional rules (regional_hours, regional_day, holiday) and the campaign’s own calling_hours until a later time.',
  values: preview.PREVIEW_RULES,
});

const PreviewedContact = builder.objectRef<preview.PreviewedContact>('PreviewedContact').implement({
  description: 'One contact of a dispatch preview.',
  fields: (t) => ({
    contactId: t.expose('contactId', { type: 'UUID' }),
    phoneNumber: t.exposeString('phoneNumber', { nullable: true }),
    callAt: t.expose('callAt', { type: 'DateTime', nullable: true, description: 'When the dialer would call it first; null: never.' }),
    blockedBy: t.expose('blockedBy', { type: PreviewRuleEnum, nullable: true, description: 'What holds it back, if anything.' }),
    blockedUntil: t.expose('blockedUntil', { type: 'DateTime', nullable: true, description: 'Until when; null with blockedBy: for good.' }),
    detail: t.exposeString('detail', { nullable: true, description: 'The region whose law applies, or the consents missing.' }),
  }),
});

const RuleCount = builder.objectRef<{ rule: preview.PreviewRule; contacts: number }>('PreviewRuleCount').implement({
  fields: (t) => ({
    rule: t.expose('rule', { type: PreviewRuleEnum }),
    contacts: t.exposeInt('contacts'),
  }),
});

const CostBasis = builder.enumType('CostEstimateBasis', {
  description: 'history: the customer’s own average call length; default: too few ended calls yet, so DIALER_HOLD_MINUTES.',
  values: ['history', 'default'] as const,
});

const CostEstimate = builder.objectRef<preview.DispatchPreview['costEstimate']>('DispatchCostEstimate').implement({
  description:
    'What the calls of a dispatch are expected to cost: calls × expected minutes × the per-minute rate, each call rounded up to a cent.',
  fields: (t) => ({
    calls: t.exposeInt('calls', { description: 'The contacts to call (toCall).' }),
    minutesPerCall: t.float({
      description:
        'Billed minutes expected of each call: the customer’s average over their latest 1,000 ended calls (those that reached nobody count 0), once 20 have ended; else DIALER_HOLD_MINUTES.',
      resolve: (e) => e.secondsPerCall / 60,
    }),
    basis: t.expose('basis', { type: CostBasis }),
    historyCalls: t.exposeInt('historyCalls', { description: 'Ended calls the average was taken over.' }),
    rateCentsPerMinute: t.exposeInt('rateCentsPerMinute'),
    costCents: t.expose('costCents', { type: 'BigInt' }),
    availableCents: t.expose('availableCents', { type: 'BigInt', description: 'What calls may spend now.' }),
    covered: t.exposeBoolean('covered', { description: 'Whether availableCents covers costCents.' }),
  }),
});

const DispatchPreview = builder.objectRef<preview.DispatchPreview>('DispatchPreview').implement({
  description:
    'What dispatching a campaign would do, judged by the dialer’s own gate with the service’s clock; nothing is written. Credits needed: one call per contact to call, of DIALER_HOLD_MINUTES at the call rate.',
  fields: (t) => ({
    campaignId: t.expose('campaignId', { type: 'UUID' }),
    from: t.expose('from', { type: 'DateTime', description: 'The moment judged from: now, or the campaign’s start when it is ahead.' }),
    contactCount: t.exposeInt('contacts', { description: 'Contacts the dispatch would leave to the dialer.' }),
    toCall: t.exposeInt('toCall', { description: 'Contacts that would be called, now or later.' }),
    callableNow: t.exposeInt('callableNow'),
    byRule: t.field({ type: [RuleCount], resolve: (p) => p.byRule }),
    firstCallAt: t.expose('firstCallAt', { type: 'DateTime', nullable: true }),
    creditsNeededCents: t.expose('creditsNeededCents', { type: 'BigInt' }),
    creditsAvailableCents: t.expose('creditsAvailableCents', { type: 'BigInt' }),
    costEstimate: t.field({ type: CostEstimate, resolve: (p) => p.costEstimate }),
    contacts: t.connection({
      type: PreviewedContact,
      description: 'Every contact, the first to be called first; those never called last.',
      resolve: (p, args) => resolveArrayConnection({ args }, p.rows),
    }),
  }),
});

builder.queryFields((t) => ({
  previewDispatch: t.field({
    type: DispatchPreview,
    description:
      'A dry run of dispatching the campaign: who would be called first and when, who is blocked by which rule until when, the credits it needs.',
    authScopes: { authenticated: true },
    args: { campaignId: t.arg({ type: 'UUID', required: true }) },
    resolve: (_root, args, ctx) => preview.previewDispatch(ctx.service, args.campaignId),
  }),
}));
