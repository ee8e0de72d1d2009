import { CampaignPurpose } from '../../generated/prisma/enums.js';
import { camelCase } from '../../key-case.js';
import { rateLimit } from '../../ops/rate-limits.js';
import { ConsentKindEnum } from './compliance.js';
import * as campaigns from '../../services/campaigns/campaigns.js';
import { callingBeginsAt } from '../../services/campaigns/calling-begins.js';
import { dispatchCampaign, resumeCampaign, type DispatchResult } from '../../services/campaigns/dispatch.js';
import { campaignProgress, noProgress, type CampaignProgress } from '../../services/campaigns/progress.js';
import { CAMPAIGN_FIELDS } from '../../services/campaigns/inputs.js';
import {
  readActiveDays,
  readCallingHours,
  readScheduleConfig,
  RETRYABLE_OUTCOMES,
  RETRYABLE_STATUSES,
  SCHEDULE_CONFIG_DESCRIPTION,
  VOICEMAIL_ACTIONS,
  VOICEMAIL_MESSAGE_MAX,
  type RetryableOutcome as RetryableOutcomeName,
  WEEKDAYS,
  type CallingHours,
  type ScheduleConfig,
} from '../../services/calling-rules/schedule.js';
import { DISPATCH_REFUSALS, PAUSED_REASONS } from '../../services/campaigns/states.js';
import { cancelCampaign, pauseCampaign } from '../../services/campaigns/transitions.js';
import { policyOf, type RetryBudget } from '../../services/calling-rules/retry-policy.js';
import { reasonList } from '../../services/errors.js';
import { distinct } from '../../services/validation.js';
import { builder, type SchemaTypes } from '../builder.js';
import { compiledConnection, compiledItem } from '../compiled-reads/declare.js';
import type { GraphQLContext } from '../context.js';
import { withServiceInput } from '../service-input.js';

export const CampaignStatus = builder.enumType('CampaignStatus', {
  values: ['draft', 'scheduled', 'running', 'paused', 'completed', 'cancelled'] as const,
});

export const Weekday = builder.enumType('Weekday', { values: WEEKDAYS });
export const CampaignPurposeEnum = builder.enumType(CampaignPurpose, {
  name: 'CampaignPurpose',
  description: 'What a campaign’s calls are for.',
});

export const RetryStatus = builder.enumType('RetryStatus', {
  description: 'Call statuses after which a contact is tried again.',
  values: RETRYABLE_STATUSES,
});

const CallingHoursType = builder.objectRef<CallingHours>('CallingHours').implement({
  description: "Local time of day (HH:MM) in the campaign's zone, or the contact's own when it has one.",
  fields: (t) => ({ start: t.exposeString('start'), end: t.exposeString('end', { description: 'Later than start; may be 24:00.' }) }),
});

export const RetryableOutcome = builder.enumType('RetryableOutcome', {
  description: 'Call outcomes after which a contact may be tried again.',
  values: RETRYABLE_OUTCOMES,
});

export const VoicemailAction = builder.enumType('VoicemailAction', {
  description:
    'hang_up: the contact is done; leave_message: the message is left, then retries follow the voicemail budget; retry_later: hang up and retry.',
  values: VOICEMAIL_ACTIONS,
});

const RetryBudgetType = builder.objectRef<{ outcome: RetryableOutcomeName; budget: RetryBudget }>('RetryBudget').implement({
  description: 'How many times, and how soon, a contact is tried again after one outcome (the effective values).',
  fields: (t) => ({
    outcome: t.field({ type: RetryableOutcome, resolve: (b) => b.outcome }),
    maxRetries: t.int({ resolve: (b) => b.budget.maxRetries }),
    retryAfterMinutes: t.int({ resolve: (b) => b.budget.retryAfterMinutes }),
  }),
});

const VoicemailPolicyType = builder.objectRef<NonNullable<ScheduleConfig['voicemail']>>('VoicemailPolicy').implement({
  fields: (t) => ({
    action: t.field({ type: VoicemailAction, resolve: (p) => p.action }),
    message: t.exposeString('message', { nullable: true, description: "With {{field}}s filled from the contact's fields." }),
  }),
});

const ScheduleConfigType = builder.objectRef<ScheduleConfig>('ScheduleConfig').implement({
  description: 'The retry policy.',
  fields: (t) => ({
    maxAttempts: t.exposeInt('max_attempts'),
    maxAttemptsPerDay: t.exposeInt('max_attempts_per_day'),
    retryIntervalMinutes: t.exposeInt('retry_interval_minutes'),
    retryOn: t.field({ type: [RetryStatus], resolve: (config) => config.retry_on }),
    retryBudgets: t.field({
      type: [RetryBudgetType],
      description: 'One per retryable outcome: its own budget, or the one retryOn, maxAttempts and retryIntervalMinutes give it.',
      resolve: (config) => {
        const { budgets } = policyOf(config, 0);
        return RETRYABLE_OUTCOMES.map((outcome) => ({ outcome, budget: budgets[outcome] }));
      },
    }),
    voicemail: t.field({ type: VoicemailPolicyType, resolve: (config) => config.voicemail ?? { action: 'retry_later' as const } }),
  }),
});

const CampaignProgressType = builder.objectRef<CampaignProgress>('CampaignProgress').implement({
  description: 'Counts of the contacts the campaign has enrolled (at its start and at each resume).',
  fields: (t) => ({
    total: t.exposeInt('total'),
    pending: t.exposeInt('pending', { description: 'Waiting for a first or next call.' }),
    dialing: t.exposeInt('dialing', { description: 'A call is in flight.' }),
    done: t.exposeInt('done'),
    reached: t.exposeInt('reached'),
    notReached: t.exposeInt('notReached', { description: 'Done with every attempt used, never reached.' }),
    doNotCall: t.exposeInt('doNotCall'),
    consentMissing: t.exposeInt('consentMissing', { description: 'Skipped: a consent the campaign requires is missing.' }),
    invalid: t.exposeInt('invalid'),
    cancelled: t.exposeInt('cancelled'),
  }),
});

// The progress of every campaign in one response comes from one grouped query: the first resolver to
// ask opens a batch, and the others join it until the event loop turns.
const progressBatches = new WeakMap<GraphQLContext, { ids: string[]; loaded: Promise<Map<string, CampaignProgress>> }>();

function loadProgress(ctx: GraphQLContext, id: string): Promise<CampaignProgress> {
  let batch = progressBatches.get(ctx);
  if (!batch) {
    const ids: string[] = [];
    const loaded = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      progressBatches.delete(ctx);
      return campaignProgress({ db: ctx.prisma }, ids);
    });
    batch = { ids, loaded };
    progressBatches.set(ctx, batch);
  }
  batch.ids.push(id);
  return batch.loaded.then((all) => all.get(id) ?? noProgress());
}

export const Campaign = builder.prismaObject('Campaign', {
  description: 'Ties one agent to one contact group; dispatching it places the calls.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    status: t.expose('status', { type: CampaignStatus }),
    pausedReason: t.exposeString('pausedReason', {
      nullable: true,
      description: `Why the campaign is paused: ${reasonList(PAUSED_REASONS)}.`,
    }),
    timezone: t.exposeString('timezone'),
    concurrentCalls: t.exposeInt('concurrentCalls'),
    maxRetryDays: t.exposeInt('maxRetryDays', { description: 'Days after the first attempt a contact may still be retried.' }),
    callingHours: t.field({ type: CallingHoursType, select: { callingHours: true }, resolve: (c) => readCallingHours(c.callingHours) }),
    activeDays: t.field({ type: [Weekday], select: { activeDays: true }, resolve: (c) => readActiveDays(c.activeDays) }),
    scheduleConfig: t.field({
      type: ScheduleConfigType,
      select: { scheduleConfig: true },
      resolve: (c) => readScheduleConfig(c.scheduleConfig),
    }),
    fieldMappings: t.expose('fieldMappings', { type: 'JSON' }),
    selectedContactFields: t.stringList({ select: { selectedContactFields: true }, resolve: (c) => c.selectedContactFields as string[] }),
    callInsights: t.expose('callInsights', { type: 'JSON' }),
    postCallAnalyzers: t.field({ type: ['JSON'], select: { postCallAnalyzers: true }, resolve: (c) => c.postCallAnalyzers as unknown[] }),
    spendCapCents: t.expose('spendCapCents', {
      type: 'BigInt',
      nullable: true,
      description: 'The most its calls may be charged in all, in cents; null: no cap.',
    }),
    requiredConsent: t.field({
      type: [ConsentKindEnum],
      select: { requiredConsent: true },
      description: 'Consents a contact must hold to be called.',
      resolve: (c) => c.requiredConsent,
    }),
    regionalRules: t.exposeBoolean('regionalRules', {
      description: "Whether the regional calling-hour rules of the callee's place apply.",
    }),
    purpose: t.expose('purpose', {
      type: CampaignPurposeEnum,
      description: 'What its calls are for: solicitation is held to the national do-not-call registries, informational calls are not.',
    }),
    callSubject: t.exposeString('callSubject', {
      nullable: true,
      description: 'What its calls are about, for the frequency caps counted per subject; null: every call of the customer counts.',
    }),
    spentCents: t.field({
      type: 'BigInt',
      description: 'What its calls were charged so far, in cents.',
      select: { spend: { select: { spentCents: true } } },
      resolve: (c) => c.spend?.spentCents ?? 0n,
    }),
    agentId: t.expose('agentId', { type: 'UUID' }),
    agent: t.relation('agent'),
    contactGroupId: t.expose('contactGroupId', { type: 'UUID' }),
    contactGroup: t.relation('contactGroup'),
    progress: t.field({ type: CampaignProgressType, resolve: (c, _args, ctx) => loadProgress(ctx, c.id) }),
    startedAt: t.expose('startedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'The planned start while draft or scheduled; once started, when it started.',
    }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
    callingBeginsAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        "When a running or scheduled campaign's next call is due: no waiting contact is due before (its start, retries and callbacks), and its calling hours in each callee's zone and the regional calling rules of their places allow none before. Null when it is neither, or nobody is left to call.",
      select: {
        status: true,
        startedAt: true,
        timezone: true,
        callingHours: true,
        activeDays: true,
        requiredConsent: true,
        regionalRules: true,
        userId: true,
      },
      resolve: (c, _args, ctx) => callingBeginsAt(ctx.service, c),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

interface CampaignFilterArgs {
  statuses?: (typeof CampaignStatus.$inferType)[] | null;
}

// Each status once, as the other filter lists are (see `distinct`).
const campaignFilter = ({ statuses }: CampaignFilterArgs) => ({ statuses: statuses && distinct(statuses) });

// countCampaigns counts the rows the list query reads.
const CAMPAIGNS_PAGE = { cursor: 'id', totalCount: true } as const;

builder.queryFields((t) => ({
  campaigns: t.prismaConnection({
    type: 'Campaign',
    description: "The caller's campaigns, newest first.",
    cursor: CAMPAIGNS_PAGE.cursor,
    authScopes: { authenticated: true },
    args: { statuses: t.arg({ type: [CampaignStatus], description: 'Only campaigns in one of these states.' }) },
    totalCount: (_parent, args, ctx) => campaigns.countCampaigns(ctx.service, campaignFilter(args)),
    resolve: (query, _root, args, ctx) => campaigns.listCampaigns(ctx.service, campaignFilter(args), query),
    extensions: compiledConnection(CAMPAIGNS_PAGE, (args: CampaignFilterArgs, ctx) =>
      campaigns.campaignListQuery(ctx.service, campaignFilter(args)),
    ),
  }),
  campaign: t.prismaField({
    type: 'Campaign',
    nullable: true,
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => campaigns.getCampaign(ctx.service, args.id, query),
    extensions: compiledItem((args: { id: string }, ctx) => campaigns.campaignItemQuery(ctx.service, args.id)),
  }),
}));

const CallingHoursInput = builder.inputType('CallingHoursInput', {
  fields: (t) => ({
    start: t.string({ required: true, description: 'HH:MM, 00:00 to 23:59.' }),
    end: t.string({ required: true, description: 'HH:MM, later than start; 24:00 allowed.' }),
  }),
});

const RetryBudgetInput = builder.inputType('RetryBudgetInput', {
  fields: (t) => ({
    maxRetries: t.int({ description: '0 (never) to 9; default: maxAttempts - 1 when retryOn lists the status, else 0.' }),
    retryAfterMinutes: t.int({ description: '1 to 10080; default: retryIntervalMinutes.' }),
  }),
});

const RetryBudgetsInput = builder.inputType('RetryBudgetsInput', {
  description: 'A budget per outcome; an outcome left out is retried as retryOn says.',
  fields: (t) => Object.fromEntries(RETRYABLE_OUTCOMES.map((outcome) => [camelCase(outcome), t.field({ type: RetryBudgetInput })])),
});

const VoicemailPolicyInput = builder.inputType('VoicemailPolicyInput', {
  fields: (t) => ({
    action: t.field({ type: VoicemailAction, required: true }),
    message: t.string({
      description: `Required to leave one; at most ${VOICEMAIL_MESSAGE_MAX} characters; {{first_name}} and the other contact fields are filled in.`,
    }),
  }),
});

const ScheduleConfigInput = builder.inputType('ScheduleConfigInput', {
  description: SCHEDULE_CONFIG_DESCRIPTION,
  fields: (t) => ({
    maxAttempts: t.int({ description: '1 to 10.' }),
    maxAttemptsPerDay: t.int({ description: '1 to maxAttempts.' }),
    retryIntervalMinutes: t.int({ description: '1 to 10080 (a week).' }),
    retryOn: t.field({ type: [RetryStatus] }),
    retryBudgets: t.field({ type: RetryBudgetsInput }),
    voicemail: t.field({ type: VoicemailPolicyInput }),
  }),
});

/** The service's description of an input field, defaults included. */
const doc = (field: keyof typeof CAMPAIGN_FIELDS) => CAMPAIGN_FIELDS[field].description;

/** Fields both inputs share; none is required. */
const editableFields = (t: PothosSchemaTypes.InputFieldBuilder<SchemaTypes, 'InputObject'>) => ({
  description: t.string(),
  concurrentCalls: t.int({ description: doc('concurrent_calls') }),
  maxRetryDays: t.int({ description: doc('max_retry_days') }),
  callingHours: t.field({ type: CallingHoursInput, description: doc('calling_hours') }),
  activeDays: t.field({ type: [Weekday], description: doc('active_days') }),
  scheduleConfig: t.field({ type: ScheduleConfigInput }),
  fieldMappings: t.field({ type: 'JSON' }),
  selectedContactFields: t.stringList(),
  timezone: t.string({ description: doc('timezone') }),
  callInsights: t.field({ type: 'JSON' }),
  postCallAnalyzers: t.field({ type: ['JSON'] }),
  spendCapCents: t.field({ type: 'BigInt', description: doc('spend_cap_cents') }),
  requiredConsent: t.field({ type: [ConsentKindEnum], description: doc('required_consent') }),
  regionalRules: t.boolean({ description: doc('regional_rules') }),
  purpose: t.field({ type: CampaignPurposeEnum, description: doc('purpose') }),
  callSubject: t.string({ description: doc('call_subject') }),
  startedAt: t.field({ type: 'DateTime', description: doc('started_at') }),
});

const CreateCampaignInput = builder.inputType('CreateCampaignInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    agentId: t.field({ type: 'UUID', required: true, description: doc('agent_id') }),
    contactGroupId: t.field({ type: 'UUID', required: true, description: doc('contact_group_id') }),
    status: t.field({ type: CampaignStatus, description: 'draft (the default) or scheduled, which needs a future startedAt.' }),
    ...editableFields(t),
  }),
});

const UpdateCampaignInput = builder.inputType('UpdateCampaignInput', {
  description:
    'Draft, paused and running campaigns can be edited (a running one dials by the new values from its next call); a started one keeps its group and start. startedAt: null clears a planned start.',
  fields: (t) => ({
    name: t.string(),
    agentId: t.field({ type: 'UUID' }),
    contactGroupId: t.field({ type: 'UUID' }),
    ...editableFields(t),
  }),
});

const DispatchCampaignResult = builder.objectRef<DispatchResult>('DispatchCampaignResult').implement({
  fields: (t) => ({
    success: t.boolean({ description: 'Always true: a refusal is a CONFLICT error with extensions.reason.', resolve: () => true }),
    status: t.field({ type: CampaignStatus, resolve: (result) => result.status }),
    scheduled: t.exposeBoolean('scheduled', { description: 'The campaign waits for its startedAt instead of calling now.' }),
    triggeredBy: t.exposeString('triggeredBy'),
    callingBeginsAt: t.expose('callingBeginsAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When its first call is due; null when nobody is left to call.',
    }),
    alreadyRunning: t.exposeBoolean('alreadyRunning', {
      description: 'The campaign was running before this dispatch, which changed nothing.',
    }),
    detail: t.exposeString('detail', {
      description:
        "What happens next and, when the first call waits a minute or more, why: a contact's retry policy or callback, the calling hours, or the regional calling rules.",
    }),
    campaign: t.prismaField({
      type: 'Campaign',
      resolve: (query, result, _args, ctx) => campaigns.getCampaign(ctx.service, result.campaignId, query),
    }),
  }),
});

builder.mutationFields((t) => ({
  createCampaign: t.prismaField({
    type: 'Campaign',
    authScopes: { authenticated: true },
    args: { input: t.arg({ type: CreateCampaignInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => campaigns.createCampaign(ctx.service, input, query)),
  }),
  updateCampaign: t.prismaField({
    type: 'Campaign',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: UpdateCampaignInput, required: true }) },
    // startedAt: null clears a planned start.
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => campaigns.updateCampaign(ctx.service, args.id, input, query), [
        'startedAt',
        'spendCapCents',
      ]),
  }),
  dispatchCampaign: t.field({
    type: DispatchCampaignResult,
    description:
      'Starts, schedules (a future startedAt) or resumes the campaign; a running one is left as it is. Refusals are CONFLICT ' +
      `errors whose reason is ${reasonList(DISPATCH_REFUSALS)}.`,
    authScopes: { authenticated: true },
    extensions: rateLimit('dispatch'),
    args: { id: t.arg({ type: 'UUID', required: true }), triggeredBy: t.arg.string({ description: 'Who or what asked (default "api").' }) },
    resolve: (_root, args, ctx) => dispatchCampaign(ctx.service, args.id, { triggeredBy: args.triggeredBy ?? undefined }),
  }),
  pauseCampaign: t.prismaField({
    type: 'Campaign',
    description: 'running -> paused (user_requested).',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => pauseCampaign(ctx.service, args.id, query),
  }),
  resumeCampaign: t.prismaField({
    type: 'Campaign',
    description: 'paused -> running, with the checks of dispatchCampaign.',
    authScopes: { authenticated: true },
    extensions: rateLimit('dispatch'),
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => resumeCampaign(ctx.service, args.id, query),
  }),
  cancelCampaign: t.prismaField({
    type: 'Campaign',
    description: 'Any state but completed -> cancelled; contacts still waiting are not called.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => cancelCampaign(ctx.service, args.id, query),
  }),
}));
