import { z } from 'zod';
import type { SqlSession } from '../../db/sql.js';
import { ConsentKind } from '../../generated/prisma/enums.js';
import type { ServiceContext } from '../context.js';
import { getContact } from './contacts.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { ownedOrNotFound } from '../owned.js';
import { parseInput, uuid, type RawInput } from '../validation.js';
import * as store from './store.js';

// Consents a contact gave: what they cover, where they came from, when, and their proof. A campaign may
// require kinds of them (the gate skips a contact without them, consent_missing). A revoked consent
// stays as history and no longer counts.

export const consentInput = z.object({
  contact_id: uuid,
  kind: z.enum(ConsentKind).describe('calls, ai_calls (AI-voiced calls) or recording.'),
  source: z.string().trim().min(1).max(200).describe('Where it was given: a web form, a signed agreement, a call.'),
  obtained_at: z.union([z.date(), z.iso.datetime({ offset: true }).transform((text) => new Date(text))], {
    error: 'Use ISO 8601 with a zone, e.g. 2026-01-31T09:00:00Z.',
  }),
  proof: z.string().trim().max(2000).optional().describe('The consent text, or a link to where it is kept.'),
});

export async function recordConsent(ctx: ServiceContext, raw: RawInput<typeof consentInput>, query: store.ConsentQuery = {}) {
  const input = parseInput(consentInput, raw);
  if (input.obtained_at > ctx.clock.now()) throw ValidationError.field('obtained_at', 'Must not be in the future.');
  await getContact(ctx, input.contact_id, { select: { id: true } });
  return store.createConsent(
    ctx,
    { contactId: input.contact_id, kind: input.kind, source: input.source, obtainedAt: input.obtained_at, proof: input.proof ?? null },
    query,
  );
}

/** Inside an import's transaction: the consents its rows carry (consent columns), recorded. */
export function recordImportedConsents(tx: SqlSession, groupId: string, now: Date): Promise<void> {
  return store.recordImportedConsents(tx, groupId, now);
}

/**
 * Revokes a consent, at once: under the locks of every contact of the user with its number, and stamped
 * after taking them, so that every call claimed after the revocation sees it (calling-rules/revocation.ts
 * says which campaigns it stops).
 */
export async function revokeConsent(ctx: ServiceContext, id: string, query: store.ConsentQuery = {}) {
  const owned =
    uuid.safeParse(id).success &&
    (await ctx.sql.transaction(async (tx) => {
      if (!(await store.lockConsentHolders(tx, ctx.user.id, id))) return false;
      await store.revokeConsent(tx, id, ctx.clock.now());
      return true;
    }));
  if (!owned) throw new NotFoundError('Consent');
  return ownedOrNotFound('Consent', id, (id) => store.findConsent(ctx, id, query));
}
