import { WebhookMessageState } from '../../generated/prisma/enums.js';
import * as endpoints from '../../services/webhooks/endpoints.js';
import { eventJsonSchemas, WEBHOOK_EVENT_TYPES } from '../../services/webhooks/events.js';
import { builder } from '../builder.js';
import { withServiceInput } from '../service-input.js';

const WebhookDeliveryState = builder.enumType(WebhookMessageState, {
  name: 'WebhookDeliveryState',
  description:
    'pending: not delivered yet (see nextAttemptAt); succeeded: a 2xx came back; failed: given up (dead-lettered), replay sends it again.',
});

const EVENT_TYPE_LIST = WEBHOOK_EVENT_TYPES.map((t) => `\`${t}\``).join(', ');

export const WebhookEndpoint = builder.prismaObject('WebhookEndpoint', {
  description:
    'A receiver of webhook events. Deliveries follow Standard Webhooks: headers webhook-id, webhook-timestamp and webhook-signature (v1, HMAC-SHA256 of "id.timestamp.body" with the secret).',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    url: t.exposeString('url'),
    description: t.exposeString('description'),
    eventTypes: t.exposeStringList('eventTypes', { description: `The event types it receives (${EVENT_TYPE_LIST}); empty: all of them.` }),
    enabled: t.exposeBoolean('enabled'),
    disabledReason: t.exposeString('disabledReason', {
      nullable: true,
      description: 'Why the service disabled it: `gone` (it answered 410) or `failing` (every delivery failed for days); null otherwise.',
    }),
    failingSince: t.expose('failingSince', {
      type: 'DateTime',
      nullable: true,
      description: 'Since when every delivery attempt has failed; null after a success.',
    }),
    previousSecretExpiresAt: t.expose('previousSecretExpiresAt', {
      type: 'DateTime',
      nullable: true,
      description: 'Until when the secret before the last rotation still signs beside the new one.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    deliveries: t.relatedConnection('messages', {
      description: 'The delivery log, newest first.',
      cursor: 'id',
      totalCount: true,
      args: { states: t.arg({ type: [WebhookDeliveryState], description: 'Only deliveries in one of these states.' }) },
      query: (args) => ({ where: endpoints.deliveryFilterWhere({ states: args.states }), orderBy: endpoints.NEWEST_FIRST }),
    }),
  }),
});

builder.prismaObject('WebhookMessage', {
  name: 'WebhookDelivery',
  description: "One event's delivery to one endpoint, with its last attempt.",
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    eventId: t.expose('eventId', { type: 'UUID', description: 'The webhook-id header: the same on every attempt, and on a replay.' }),
    eventType: t.string({ select: { event: { select: { type: true } } }, resolve: (m) => m.event.type }),
    payload: t.field({
      type: 'JSON',
      description: 'The body sent.',
      select: { event: { select: { payload: true } } },
      resolve: (m) => m.event.payload,
    }),
    state: t.expose('state', { type: WebhookDeliveryState }),
    attempts: t.exposeInt('attempts', { description: 'Attempts made so far.' }),
    lastStatusCode: t.exposeInt('lastStatusCode', {
      nullable: true,
      description: "The last attempt's status code; null when nothing answered.",
    }),
    lastLatencyMs: t.exposeInt('lastLatencyMs', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true, description: 'Why the last attempt failed.' }),
    lastAttemptAt: t.expose('lastAttemptAt', { type: 'DateTime', nullable: true }),
    nextAttemptAt: t.expose('nextAttemptAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it is tried again; null unless pending after a failure.',
    }),
    deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true }),
    replayOf: t.expose('replayOf', { type: 'UUID', nullable: true, description: 'The delivery this one sends again.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    endpoint: t.relation('endpoint'),
  }),
});

const WebhookEventTypeInfo = builder
  .objectRef<{ type: string; description: string; schema: unknown; example: unknown }>('WebhookEventType')
  .implement({
    description: 'An event type and the JSON Schema of its delivery body.',
    fields: (t) => ({
      type: t.exposeString('type'),
      description: t.exposeString('description'),
      schema: t.field({ type: 'JSON', description: 'JSON Schema (draft 2020-12) of the body.', resolve: (e) => e.schema }),
      example: t.field({ type: 'JSON', description: 'An example body.', resolve: (e) => e.example }),
    }),
  });

const CreateWebhookEndpointInput = builder.inputType('CreateWebhookEndpointInput', {
  fields: (t) => ({
    url: t.string({
      required: true,
      description: 'http or https; in production only on a globally routable address (not loopback, private, link-local or reserved).',
    }),
    description: t.string({ description: 'Up to 500 characters.' }),
    eventTypes: t.stringList({ description: `Event types to receive (${EVENT_TYPE_LIST}); leave out or empty for all.` }),
    enabled: t.boolean({ description: 'Default: true.' }),
  }),
});

const UpdateWebhookEndpointInput = builder.inputType('UpdateWebhookEndpointInput', {
  fields: (t) => ({
    url: t.string(),
    description: t.string(),
    eventTypes: t.stringList(),
    enabled: t.boolean({ description: 'Enabling again clears why it was disabled; replay what was given up meanwhile.' }),
  }),
});

const WebhookEndpointSecret = builder.objectRef<endpoints.EndpointWithSecret>('WebhookEndpointSecret').implement({
  description: 'An endpoint and its signing secret, which is never shown again.',
  fields: (t) => ({
    endpoint: t.prismaField({
      type: 'WebhookEndpoint',
      resolve: (query, made, _args, ctx) => endpoints.getEndpoint(ctx.service, made.endpoint.id, query),
    }),
    secret: t.exposeString('secret', { description: '`whsec_` and the base64 of the key, as Standard Webhooks libraries take it.' }),
  }),
});

builder.queryFields((t) => ({
  webhookEndpoints: t.prismaField({
    type: ['WebhookEndpoint'],
    description: 'Your webhook endpoints, newest first (deleted ones are not listed).',
    authScopes: { authenticated: true },
    resolve: (query, _root, _args, ctx) => endpoints.listEndpoints(ctx.service, query),
  }),
  webhookEndpoint: t.prismaField({
    type: 'WebhookEndpoint',
    nullable: true,
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => endpoints.getEndpoint(ctx.service, args.id, query),
  }),
  webhookDelivery: t.prismaField({
    type: 'WebhookMessage',
    nullable: true,
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => endpoints.getDelivery(ctx.service, args.id, query),
  }),
  webhookEventTypes: t.field({
    type: [WebhookEventTypeInfo],
    description: 'Every event type, with the JSON Schema of its body and an example.',
    authScopes: { authenticated: true },
    resolve: () => Object.entries(eventJsonSchemas()).map(([type, info]) => ({ type, ...info })),
  }),
}));

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.field({
    type: WebhookEndpointSecret,
    description: `Registers an endpoint and shows its secret this once. At most ${endpoints.MAX_ENDPOINTS} (CONFLICT, reason webhook_endpoint_limit).`,
    authScopes: { authenticated: true },
    args: { input: t.arg({ type: CreateWebhookEndpointInput, required: true }) },
    resolve: (_root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => endpoints.createEndpoint(ctx.service, input)),
  }),
  updateWebhookEndpoint: t.prismaField({
    type: 'WebhookEndpoint',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: UpdateWebhookEndpointInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, async (input) => {
        await endpoints.updateEndpoint(ctx.service, args.id, input);
        return endpoints.getEndpoint(ctx.service, args.id, query);
      }),
  }),
  deleteWebhookEndpoint: t.boolean({
    description: 'Deletes an endpoint: nothing more goes to it. It is kept, with its delivery log, as history.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: async (_root, args, ctx) => {
      await endpoints.deleteEndpoint(ctx.service, args.id);
      return true;
    },
  }),
  rotateWebhookEndpointSecret: t.field({
    type: WebhookEndpointSecret,
    description: `Gives the endpoint a new secret, shown this once. The old one keeps signing beside it for overlapSeconds (default ${endpoints.DEFAULT_ROTATION_OVERLAP_SECONDS}, at most 7 days): deliveries carry both signatures meanwhile.`,
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), overlapSeconds: t.arg.int() },
    resolve: (_root, args, ctx) => endpoints.rotateSecret(ctx.service, args.id, args.overlapSeconds ?? undefined),
  }),
  pingWebhookEndpoint: t.prismaField({
    type: 'WebhookMessage',
    description: 'Sends the endpoint a `webhook.ping` event, whatever types it takes; answers its delivery.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: async (query, _root, args, ctx) =>
      endpoints.getDelivery(ctx.service, await endpoints.pingEndpoint(ctx.service, args.id), query),
  }),
  replayWebhookDelivery: t.prismaField({
    type: 'WebhookMessage',
    description: 'Sends a delivery again as a new delivery of the same event (same webhook-id); the old one stays in the log.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: async (query, _root, args, ctx) =>
      endpoints.getDelivery(ctx.service, await endpoints.replayDelivery(ctx.service, args.id), query),
  }),
  replayFailedWebhookDeliveries: t.int({
    description: 'Sends again every delivery to the endpoint that failed, made at or after `since` and not replayed yet; answers how many.',
    authScopes: { authenticated: true },
    args: { endpointId: t.arg({ type: 'UUID', required: true }), since: t.arg({ type: 'DateTime', required: true }) },
    resolve: (_root, args, ctx) => endpoints.replayFailedDeliveries(ctx.service, args.endpointId, args.since),
  }),
}));
