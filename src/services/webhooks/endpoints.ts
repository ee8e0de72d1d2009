import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { ownedOrNotFound } from '../owned.js';
import { lockUser } from '../users/store.js';
import { distinct, parseInput, uuid, type RawInput } from '../validation.js';
import { checkHost } from './addresses.js';
import { WEBHOOK_EVENT_TYPES } from './events.js';
import { newSecret } from './signing.js';
import * as store from './store.js';

// Customers' webhook endpoints: where events go, which ones, and the secret that signs them (shown when
// made or rotated, never again). Deleting one keeps it, and its delivery log, as history.

/** Endpoints a user may have at once. */
export const MAX_ENDPOINTS = 20;
/** A rotated-out secret signs beside the new one this long by default, so receivers can switch over. */
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 24 * 3600;
const MAX_ROTATION_OVERLAP_SECONDS = 7 * 24 * 3600;

const eventTypes = z
  .array(z.enum(WEBHOOK_EVENT_TYPES, { error: `Must be one of: ${WEBHOOK_EVENT_TYPES.join(', ')}.` }))
  .max(WEBHOOK_EVENT_TYPES.length)
  .transform((types) => [...new Set(types)]);

const url = z
  .string()
  .trim()
  .max(2048)
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), 'Must be an http or https URL.')
  .refine(
    (value) => !URL.canParse(value) || (!new URL(value).username && !new URL(value).password),
    'Must not carry a user name or password.',
  );

const createInput = z.object({
  url,
  description: z.string().trim().max(500).default(''),
  event_types: eventTypes.default([]),
  enabled: z.boolean().default(true),
});

const updateInput = z.object({
  url: url.optional(),
  description: z.string().trim().max(500).optional(),
  event_types: eventTypes.optional(),
  enabled: z.boolean().optional(),
});

export interface EndpointWithSecret {
  endpoint: { id: string };
  /** `whsec_...`; shown this once. */
  secret: string;
}

/** Refuses a URL whose host is private (unless allowed) or does not resolve. */
async function checkUrl(ctx: ServiceContext, value: string): Promise<void> {
  if (ctx.settings.webhooks.allowPrivateUrls) return;
  const problem = await checkHost(new URL(value).hostname);
  if (problem) throw ValidationError.field('url', problem);
}

export async function createEndpoint(ctx: ServiceContext, raw: RawInput<typeof createInput>): Promise<EndpointWithSecret> {
  const input = parseInput(createInput, raw);
  await checkUrl(ctx, input.url);
  const secret = newSecret();
  // Counted and added under the user's row lock: requests at once, from any process, take turns, so none
  // counts before another's endpoint is added.
  const id = await ctx.sql.transaction(async (tx) => {
    await lockUser(tx, ctx.user.id);
    if ((await store.countEndpoints(tx, ctx.user.id)) >= MAX_ENDPOINTS) {
      throw new ConflictError(
        `You have ${MAX_ENDPOINTS} webhook endpoints, the most there may be: delete one first.`,
        'webhook_endpoint_limit',
      );
    }
    return store.insertEndpoint(tx, {
      userId: ctx.user.id,
      url: input.url,
      description: input.description,
      eventTypes: input.event_types,
      enabled: input.enabled,
      secret,
    });
  });
  return { endpoint: { id }, secret };
}

export function listEndpoints<Q extends store.EndpointQuery = {}>(ctx: ServiceContext, query: Q = {} as Q) {
  return store.findEndpoints(ctx.db, ctx.user.id, query);
}

export function getEndpoint<Q extends store.EndpointQuery = {}>(ctx: ServiceContext, id: string, query: Q = {} as Q) {
  return ownedOrNotFound('WebhookEndpoint', id, (id) => store.findEndpoint(ctx.db, ctx.user.id, id, query));
}

async function change(ctx: ServiceContext, id: string, data: Parameters<typeof store.updateEndpoint>[3]): Promise<void> {
  if (!uuid.safeParse(id).success || !(await store.updateEndpoint(ctx.db, ctx.user.id, id, data))) {
    throw new NotFoundError('WebhookEndpoint');
  }
}

/** Changes an endpoint. Enabling it again clears why it was disabled; deliveries given up meanwhile can be replayed. */
export async function updateEndpoint(ctx: ServiceContext, id: string, raw: RawInput<typeof updateInput>): Promise<void> {
  const input = parseInput(updateInput, raw);
  await getEndpoint(ctx, id, { select: { id: true } });
  if (input.url !== undefined) await checkUrl(ctx, input.url);
  await change(ctx, id, {
    url: input.url,
    description: input.description,
    eventTypes: input.event_types,
    ...(input.enabled === undefined ? {} : { enabled: input.enabled, disabledReason: null, failingSince: null }),
  });
}

/** Deletes an endpoint: nothing more goes to it; it stays, with its log, as history (and is no longer listed). */
export async function deleteEndpoint(ctx: ServiceContext, id: string): Promise<void> {
  await change(ctx, id, { deletedAt: ctx.clock.now(), enabled: false });
}

/**
 * A new secret; the one it replaces signs beside it for `overlapSeconds`, so that receivers can switch
 * without missing a delivery. Of two rotations at once, the later replaces the earlier's new secret.
 */
export async function rotateSecret(
  ctx: ServiceContext,
  id: string,
  overlapSeconds = DEFAULT_ROTATION_OVERLAP_SECONDS,
): Promise<EndpointWithSecret> {
  if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_ROTATION_OVERLAP_SECONDS) {
    throw ValidationError.field('overlap_seconds', `Must be a whole number of seconds from 0 to ${MAX_ROTATION_OVERLAP_SECONDS}.`);
  }
  const secret = newSecret();
  const previousUntil = new Date(ctx.clock.now().getTime() + overlapSeconds * 1000);
  if (!uuid.safeParse(id).success || !(await store.rotateSecret(ctx.sql, ctx.user.id, id, secret, previousUntil))) {
    throw new NotFoundError('WebhookEndpoint');
  }
  return { endpoint: { id }, secret };
}

const refuseDisabled = () =>
  new ConflictError('The endpoint is disabled: enable it before sending it anything.', 'webhook_endpoint_disabled');

/** Sends a test event to the endpoint; the delivery's id. */
export async function pingEndpoint(ctx: ServiceContext, id: string): Promise<string> {
  const endpoint = await getEndpoint(ctx, id, { select: { id: true, enabled: true } });
  if (!endpoint.enabled) throw refuseDisabled();
  const delivery = await ctx.sql.transaction(async (tx) => {
    const made = await store.emit(tx, [
      { type: 'webhook.ping', userId: ctx.user.id, endpointId: id, data: { endpoint_id: id, message: 'A test event from callflow.' } },
    ]);
    return made > 0 ? store.latestPing(tx, id) : undefined;
  });
  if (!delivery) throw refuseDisabled();
  return delivery;
}

// The delivery log.

export interface DeliveryFilter {
  states?: ('pending' | 'succeeded' | 'failed')[] | null | undefined;
}

export const NEWEST_FIRST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

/** The deliveries of an endpoint a filter keeps. */
export function deliveryFilterWhere(filter: DeliveryFilter) {
  return filter.states ? { state: { in: distinct(filter.states) } } : {};
}

export function getDelivery<Q extends store.MessageQuery = {}>(ctx: ServiceContext, id: string, query: Q = {} as Q) {
  return ownedOrNotFound('WebhookDelivery', id, (id) => store.findMessage(ctx.db, ctx.user.id, id, query));
}

/** Sends one delivery again, as a new delivery of the same event (the old one stays in the log); the new one's id. */
export async function replayDelivery(ctx: ServiceContext, id: string): Promise<string> {
  await getDelivery(ctx, id, { select: { id: true } });
  const replayed = await store.replayMessage(ctx.sql, ctx.user.id, id);
  if (!replayed) throw refuseDisabled();
  return replayed;
}

/** Sends again every delivery to the endpoint that failed, made since `since`, not replayed before; how many. */
export async function replayFailedDeliveries(ctx: ServiceContext, endpointId: string, since: Date): Promise<number> {
  const endpoint = await getEndpoint(ctx, endpointId, { select: { id: true, enabled: true } });
  if (!endpoint.enabled) throw refuseDisabled();
  // Replays of one endpoint take turns on its row lock, so that each failed delivery is replayed once.
  return ctx.sql.transaction(async (tx) => {
    await store.lockEndpoint(tx, ctx.user.id, endpointId);
    return store.replayFailed(tx, ctx.user.id, endpointId, since);
  });
}
