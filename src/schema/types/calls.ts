import { CallOutcome as CallOutcomes, CallStatus as CallStatuses, Sentiment as Sentiments } from '../../generated/prisma/enums.js';
import { cancelCallback } from '../../services/dialer/callbacks.js';
import * as calls from '../../services/results/calls.js';
import { snakeKeys } from '../../key-case.js';
import { builder } from '../builder.js';

export const CallStatus = builder.enumType(CallStatuses, { name: 'CallStatus' });
export const Sentiment = builder.enumType(Sentiments, { name: 'Sentiment' });
export const CallOutcome = builder.enumType(CallOutcomes, {
  name: 'CallOutcome',
  description: 'What a finished call met, in the same words whichever provider placed it.',
});

export const CallAttempt = builder.prismaObject('CallAttempt', {
  description: 'One dial of one contact by a campaign, as the telephony provider reported it.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    attemptNumber: t.exposeInt('attemptNumber', { description: 'Which attempt at this contact in this campaign, from 1.' }),
    status: t.expose('status', { type: CallStatus }),
    outcome: t.expose('outcome', { type: CallOutcome, nullable: true, description: 'Null until the call has ended.' }),
    callbackAt: t.expose('callbackAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the callee asked, during this call, to be called back; the next call is planned then.',
    }),
    toNumber: t.exposeString('toNumber', { nullable: true, description: 'The number dialed (E.164); null once the contact was erased.' }),
    fromNumber: t.exposeString('fromNumber', { nullable: true, description: 'The agent number it was dialed from.' }),
    agentId: t.expose('agentId', {
      type: 'UUID',
      nullable: true,
      description: "The agent that made the call: the campaign's, or its A/B variant's (null for calls made before this was kept).",
    }),
    agentVersion: t.exposeInt('agentVersion', {
      nullable: true,
      description: "The agent's version the call was made with: the one published at the voice provider when it was dialed.",
    }),
    durationSeconds: t.exposeInt('durationSeconds', { nullable: true, description: 'Null until the call has ended.' }),
    summary: t.exposeString('summary', { nullable: true }),
    sentiment: t.expose('sentiment', { type: Sentiment }),
    costCents: t.expose('costCents', { type: 'BigInt', description: 'What the call was charged.' }),
    recordingUrl: t.exposeString('recordingUrl', { nullable: true }),
    transcript: t.exposeString('transcript', { nullable: true }),
    disconnectReason: t.exposeString('disconnectReason', { nullable: true }),
    analysis: t.expose('analysis', { type: 'JSON', description: 'Post-call analysis the provider returned.' }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    endedAt: t.expose('endedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the call was dialed.' }),
    contact: t.relation('contact'),
    campaign: t.relation('campaign'),
    appointments: t.relation('appointments', { query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } }),
  }),
});

builder.queryFields((t) => ({
  callAttempts: t.prismaConnection({
    type: 'CallAttempt',
    description: 'The caller’s call history across campaigns, newest first.',
    cursor: 'id',
    authScopes: { authenticated: true },
    args: {
      campaignId: t.arg({ type: 'UUID' }),
      contactId: t.arg({ type: 'UUID' }),
      statuses: t.arg({ type: [CallStatus], description: 'Only calls with one of these statuses.' }),
      sentiments: t.arg({ type: [Sentiment], description: 'Only calls with one of these sentiments.' }),
      from: t.arg({ type: 'DateTime', description: 'Only calls dialed at or after this time.' }),
      to: t.arg({ type: 'DateTime', description: 'Only calls dialed before this time.' }),
    },
    totalCount: (_parent, args, ctx) => calls.countCallAttempts(ctx.service, snakeKeys(args)),
    resolve: (query, _root, args, ctx) => calls.listCallAttempts(ctx.service, snakeKeys(args), query),
  }),
  callAttempt: t.prismaField({
    type: 'CallAttempt',
    nullable: true,
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => calls.getCallAttempt(ctx.service, args.id, query),
  }),
}));

builder.prismaObjectFields('Campaign', (t) => ({
  attempts: t.relatedConnection('callAttempts', {
    description: 'The campaign’s call attempts, newest first.',
    cursor: 'id',
    totalCount: true,
    args: {
      contactId: t.arg({ type: 'UUID' }),
      statuses: t.arg({ type: [CallStatus], description: 'Only calls with one of these statuses.' }),
      sentiments: t.arg({ type: [Sentiment], description: 'Only calls with one of these sentiments.' }),
      from: t.arg({ type: 'DateTime', description: 'Only calls dialed at or after this time.' }),
      to: t.arg({ type: 'DateTime', description: 'Only calls dialed before this time.' }),
    },
    query: (args) => ({ where: calls.callAttemptFilterWhere(snakeKeys(args)), orderBy: calls.NEWEST_FIRST }),
  }),
}));

builder.mutationFields((t) => ({
  cancelCallback: t.boolean({
    description:
      'Cancels the callback a contact asked for, before its call: the contact is done as its last call left it. NOT_FOUND when none is waiting.',
    authScopes: { authenticated: true },
    args: { campaignId: t.arg({ type: 'UUID', required: true }), contactId: t.arg({ type: 'UUID', required: true }) },
    resolve: async (_root, args, ctx) => {
      await cancelCallback(ctx.service, args.campaignId, args.contactId);
      return true;
    },
  }),
}));
