import * as callerIds from '../../services/agents/caller-ids.js';
import { callerIdState, type CallerIdState } from '../../services/dialer/caller-id-state.js';
import { builder, type SchemaTypes } from '../builder.js';
import { withServiceInput } from '../service-input.js';

const CallerIdStateEnum = builder.enumType('CallerIdState', {
  description:
    'available; at_limit (calls per hour or day used up); cooling_down (after a run of unanswered calls); awaiting_results (its unanswered calls in a row and its calls in flight reach cooldownAfterUnanswered: none until their results come); rested (its answer rate fell).',
  values: ['available', 'at_limit', 'cooling_down', 'awaiting_results', 'rested'] as const,
});

const CallerIdUsage = builder.objectRef<CallerIdState>('CallerIdUsage').implement({
  description: 'What its limits make of the number now.',
  fields: (t) => ({
    state: t.field({ type: CallerIdStateEnum, resolve: (u) => u.state }),
    availableAt: t.expose('availableAt', {
      type: 'DateTime',
      description:
        'When it may place a call (now when it may); with awaiting_results, when its other limits would let it, once those results come.',
    }),
    callsLastHour: t.exposeInt('callsLastHour'),
    callsLastDay: t.exposeInt('callsLastDay'),
    answerRate: t.exposeFloat('answerRate', {
      nullable: true,
      description:
        'The share of its latest calls (since its last rest, up to restWindowCalls) that reached a person; null without a rest threshold or calls.',
    }),
    windowCalls: t.exposeInt('windowCalls'),
  }),
});

export const PhoneNumber = builder.prismaObject('PhoneNumber', {
  description: 'An outbound number (E.164) owned by the user, usually attached to an agent: one of its caller IDs.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    number: t.exposeString('number'),
    label: t.exposeString('label'),
    isPrimary: t.exposeBoolean('isPrimary'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    maxCallsPerHour: t.exposeInt('maxCallsPerHour', { nullable: true }),
    maxCallsPerDay: t.exposeInt('maxCallsPerDay', { nullable: true }),
    cooldownAfterUnanswered: t.exposeInt('cooldownAfterUnanswered', { nullable: true }),
    cooldownMinutes: t.exposeInt('cooldownMinutes'),
    restBelowAnswerRate: t.exposeFloat('restBelowAnswerRate', { nullable: true }),
    restWindowCalls: t.exposeInt('restWindowCalls'),
    restHours: t.exposeInt('restHours'),
    restedUntil: t.expose('restedUntil', { type: 'DateTime', nullable: true }),
    usage: t.field({
      type: CallerIdUsage,
      nullable: true,
      resolve: (n, _args, ctx) => callerIdState(ctx.service, n.id),
    }),
  }),
});

const limitFields = (t: PothosSchemaTypes.InputFieldBuilder<SchemaTypes, 'InputObject'>) => ({
  maxCallsPerHour: t.int({ description: 'Calls it may place in any hour, 1 to 100000; null: no limit.' }),
  maxCallsPerDay: t.int({ description: 'Calls it may place in any 24 hours; null: no limit.' }),
  cooldownAfterUnanswered: t.int({
    description:
      'After this many unanswered calls in a row it rests cooldownMinutes; its calls in flight count as unanswered until their results come; null: never.',
  }),
  cooldownMinutes: t.int({ description: '1 to 10080 (default 30).' }),
  restBelowAnswerRate: t.float({
    description: '0 to 1: rested restHours when fewer of its last restWindowCalls calls reached a person; null: never.',
  }),
  restWindowCalls: t.int({ description: '5 to 10000 (default 50).' }),
  restHours: t.int({ description: '1 to 720 (default 24).' }),
});

const AddCallerIdInput = builder.inputType('AddCallerIdInput', {
  fields: (t) => ({ phoneNumber: t.string({ required: true }), label: t.string(), ...limitFields(t) }),
});

const CallerIdLimitsInput = builder.inputType('CallerIdLimitsInput', {
  fields: (t) => ({ ...limitFields(t), endRest: t.boolean({ description: 'Ends a rest in progress.' }) }),
});

const NULLABLE_LIMITS = ['maxCallsPerHour', 'maxCallsPerDay', 'cooldownAfterUnanswered', 'restBelowAnswerRate'];

builder.mutationFields((t) => ({
  addCallerId: t.prismaField({
    type: 'PhoneNumber',
    description: "Adds a number to an active agent's caller IDs: each call goes out from the one that best matches the callee.",
    authScopes: { authenticated: true },
    args: { agentId: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: AddCallerIdInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(
        info,
        'input',
        args.input,
        (input) => callerIds.addCallerId(ctx.service, args.agentId, input, query),
        NULLABLE_LIMITS,
      ),
  }),
  setCallerIdLimits: t.prismaField({
    type: 'PhoneNumber',
    description: 'Sets the limits of one of your numbers (null lifts one), or ends its rest.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: CallerIdLimitsInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(
        info,
        'input',
        args.input,
        (input) => callerIds.setCallerIdLimits(ctx.service, args.id, input, query),
        NULLABLE_LIMITS,
      ),
  }),
}));
