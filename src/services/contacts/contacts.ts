import { z } from 'zod';
import type { ContactStatus, Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { defaultCountryOf } from '../users/store.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { toE164 } from '../phone.js';
import { jsonObject, parseInput, uuid, type RawInput } from '../validation.js';
import { UNKNOWN_TIME_ZONE } from '../time-zones.js';
import { isOnDoNotCallList, putOnList, takeOffList } from './do-not-call.js';
import { canonicalData, mergeData, planColumns, readData, unknownTimeZoneColumn, withColumns, type ContactData } from './fields.js';
import { removeContacts } from './erasure.js';
import { getGroup } from './groups.js';
import { ownedOrNotFound } from '../owned.js';
import * as store from './store.js';
import { changeTotals } from './totals.js';

export type ContactQuery = store.ContactQuery;

export interface ContactFilter {
  status?: ContactStatus | null | undefined;
  /** Matches the name (any case) or the digits of the number. */
  search?: string | null | undefined;
}

/**
 * The filter alone, for reads that reach contacts through a group the caller already owns. Erased
 * contacts are in no list: only the history of the campaigns that called them shows them, anonymous.
 */
export function contactFilterWhere(filter: ContactFilter): Prisma.ContactWhereInput {
  const search = filter.search?.trim();
  const digits = search?.replace(/\D/g, '');
  return {
    erasedAt: null,
    ...(filter.status ? { status: filter.status } : {}),
    ...(search
      ? {
          OR: [{ name: { contains: search, mode: 'insensitive' as const } }, ...(digits ? [{ phoneNumber: { contains: digits } }] : [])],
        }
      : {}),
  };
}

/** The filter of one of the caller's contacts, for reads that compile it into their own statement. */
export function contactItemQuery(ctx: ServiceContext, id: string) {
  return store.contactItem(ctx.user.id, id);
}

/** One of the user's contacts; an erased contact is gone for its user. */
export function getContact<Q extends ContactQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.ContactGetPayload<Q>> {
  return ownedOrNotFound('Contact', id, (id) => store.findContact(ctx.db, ctx.user.id, id, query));
}

/**
 * Deletes a person: `erased` when campaigns called them or an appointment names them (their personal
 * data is gone, the anonymous facts of their calls stay), `deleted` when nothing did. Refused (409)
 * during a call to them.
 */
export async function deleteContact(ctx: ServiceContext, id: string): Promise<'erased' | 'deleted'> {
  const contact = await getContact(ctx, id, { select: { id: true } });
  const removal = await ctx.sql.transaction((tx) => removeContacts(tx, [contact.id], ctx.clock.now()));
  if (removal.erased + removal.deleted === 0) throw new NotFoundError('Contact');
  for (const campaignId of removal.campaignIds) ctx.events.publish({ kind: 'campaign', campaignId });
  return removal.erased ? 'erased' : 'deleted';
}

/** A `data` object as a client sends it: keys are matched to standard fields like file headers; a zone must be one. */
function dataFromObject(object: Record<string, unknown>, country: string): ContactData {
  const row: Record<string, string> = {};
  for (const [key, value] of Object.entries(object)) {
    if (value !== null && typeof value === 'object') {
      if (key === 'custom_fields') Object.assign(row, stringValues(value as Record<string, unknown>, 'data.custom_fields'));
      else throw ValidationError.field(`data.${key}`, 'Expected a text, number or boolean value.');
      continue;
    }
    row[key] = value === null || value === undefined ? '' : String(value);
  }
  const plan = planColumns(Object.keys(row));
  const data = canonicalData(plan, row, (raw) => toE164(raw, country));
  const badZone = unknownTimeZoneColumn(plan, data);
  if (badZone !== null) throw ValidationError.field(`data.${badZone}`, UNKNOWN_TIME_ZONE);
  return data;
}

function stringValues(object: Record<string, unknown>, path: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(object).map(([key, value]) => {
      if (value !== null && typeof value === 'object')
        throw ValidationError.field(`${path}.${key}`, 'Expected a text, number or boolean value.');
      return [key, value === null || value === undefined ? '' : String(value)];
    }),
  );
}

const countryOf = (ctx: ServiceContext) => defaultCountryOf(ctx.db, ctx.user.id);

/** A write that found no row: another request deleted the contact meanwhile. */
function stillThere(written: boolean): void {
  if (!written) throw new NotFoundError('Contact');
}

export const upsertInput = z.object({
  phone_number: z.string().trim().min(1).max(32),
  data: jsonObject.default({}),
  /** Another of the user's groups to move the contact to. */
  contact_group_id: uuid.nullish(),
});

/**
 * v1 `PATCH /contacts/groups/{id}/`: the contact with this number in the group is created, or its data
 * merged, and moved to `contact_group_id` when that names another group. A contact moved onto a number
 * the target group already has is merged into that one. Both groups' totals change with it.
 */
export async function upsertContactInGroup<Q extends ContactQuery = {}>(
  ctx: ServiceContext,
  groupId: string,
  raw: RawInput<typeof upsertInput>,
  query: Q = {} as Q,
): Promise<Prisma.ContactGetPayload<Q>> {
  await getGroup(ctx, groupId, { select: { id: true } });
  const input = parseInput(upsertInput, raw);
  const target = input.contact_group_id && input.contact_group_id !== groupId ? input.contact_group_id : groupId;
  if (target !== groupId) {
    await getGroup(ctx, target, { select: { id: true } }).catch((error) => {
      if (error instanceof NotFoundError) throw ValidationError.field('contact_group_id', 'No contact group with this id.');
      throw error;
    });
  }
  const country = await countryOf(ctx);
  const e164 = toE164(input.phone_number, country);
  const key = e164 ?? input.phone_number.slice(0, 32);
  const patch = { ...dataFromObject(input.data, country), phone_number: input.phone_number };

  const id = await ctx.sql.transaction(async (tx) => {
    const blocked = e164 ? await isOnDoNotCallList(tx, ctx.user.id, e164) : false;
    const status: ContactStatus = !e164 ? 'invalid' : blocked ? 'do_not_call' : 'active';
    const existing = await store.contactByNumber(tx, groupId, key);
    const clash = target !== groupId ? await store.contactByNumber(tx, target, key) : undefined;

    if (clash) {
      const base = existing ? mergeData(readData(clash.data), readData(existing.data)) : readData(clash.data);
      stillThere(await store.rewriteContact(tx, clash.id, target, { ...withColumns(mergeData(base, patch)), status, groupId: target }));
      // The person lives on in the target's row; calls made to the merged row stay in history, anonymous.
      // Removing it takes it from its group's total.
      if (existing) await removeContacts(tx, [existing.id], ctx.clock.now());
      return clash.id;
    }
    if (existing) {
      stillThere(
        await store.rewriteContact(tx, existing.id, groupId, {
          ...withColumns(mergeData(readData(existing.data), patch)),
          status,
          groupId: target,
        }),
      );
      await changeTotals(tx, [target], [groupId]);
      return existing.id;
    }
    const inserted = await store.insertContact(tx, {
      ...withColumns(patch),
      userId: ctx.user.id,
      groupId: target,
      phoneNumber: key,
      status,
    });
    await changeTotals(tx, [target], []);
    return inserted;
  });
  return getContact(ctx, id, query);
}

export const updateContactInput = z.object({
  data: jsonObject.optional(),
  status: z.enum(['active', 'invalid', 'do_not_call']).optional(),
});

/**
 * Merges data into a contact and changes its status. `do_not_call` puts the number on the user's list
 * (so it holds in every group); leaving it takes the number off the list again.
 */
export async function updateContact<Q extends ContactQuery = {}>(
  ctx: ServiceContext,
  id: string,
  raw: RawInput<typeof updateContactInput>,
  query: Q = {} as Q,
): Promise<Prisma.ContactGetPayload<Q>> {
  const contact = await getContact(ctx, id);
  const input = parseInput(updateContactInput, raw);
  const country = await countryOf(ctx);
  const e164 = contact.phoneNumber ? toE164(contact.phoneNumber, country) : null;
  if (input.status && input.status !== 'invalid' && !e164) {
    throw ValidationError.field('status', 'This contact has no valid phone number.');
  }

  await ctx.sql.transaction(async (tx) => {
    if (input.data) {
      // The number is changed through upsert, not through data.
      const { phone_number: _ignored, ...patch } = dataFromObject(input.data, country);
      stillThere(await store.writeContactData(tx, id, withColumns(mergeData(readData(contact.data), patch))));
    }
    if (!input.status || input.status === contact.status) return;
    if (input.status === 'do_not_call') {
      await putOnList(tx, ctx.user.id, e164!, 'Marked on a contact', 'contact');
    } else if (contact.status === 'do_not_call') {
      await takeOffList(tx, ctx.user.id, e164!);
    }
    stillThere(await store.setContactStatus(tx, id, input.status));
  });
  return getContact(ctx, id, query);
}
