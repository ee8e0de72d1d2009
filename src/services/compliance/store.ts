import type { Prisma } from '../../generated/prisma/client.js';
import { named } from '../../db/prisma-names.js';
import { statement, type SqlSession } from '../../db/sql.js';
import type { ServiceContext } from '../context.js';

// The compliance domain's rows: the consents contacts gave. (The dialer writes dial blocks with its
// claim, in one statement: see dialer/store/placing.ts.)

// The import normalised each consent cell to an ISO instant or `yes` (contacts/fields.ts).
const importedConsentsStatement = statement(
  'compliance.imported_consents',
  `INSERT INTO contact_consents (id, user_id, contact_id, kind, source, obtained_at, proof, created_at)
   SELECT gen_random_uuid(), c.user_id, c.id, k.kind::"ConsentKind", left(coalesce(nullif(c.data->>'consent_source', ''), 'import'), 200),
          CASE k.value WHEN 'yes' THEN $2 ELSE k.value::timestamptz END, left(nullif(c.data->>'consent_proof', ''), 2000), $2
   FROM contacts c
   CROSS JOIN LATERAL (VALUES ('calls', c.data->>'consent_calls'), ('ai_calls', c.data->>'consent_ai_calls'),
                              ('recording', c.data->>'consent_recording')) AS k(kind, value)
   WHERE c.contact_group_id = $1::uuid AND k.value IS NOT NULL`,
);

/** Records the consents the rows of an imported group carry; `now` stands for a consent given without a date. */
export async function recordImportedConsents(tx: SqlSession, groupId: string, now: Date): Promise<void> {
  await tx.run(importedConsentsStatement, [groupId, now]);
}

export type ConsentQuery = Omit<Prisma.ContactConsentFindUniqueArgs, 'where'>;

export function createConsent(ctx: ServiceContext, data: Omit<Prisma.ContactConsentUncheckedCreateInput, 'userId'>, query: ConsentQuery) {
  return named('compliance.createConsent', () => ctx.db.contactConsent.create({ ...query, data: { ...data, userId: ctx.user.id } }));
}

export function findConsent(ctx: ServiceContext, id: string, query: ConsentQuery) {
  return named('compliance.consent', () => ctx.db.contactConsent.findFirst({ ...query, where: { id, userId: ctx.user.id } }));
}

/** Revokes the consent (once: a revoked one keeps its first revocation); false when it is not the user's. */
export async function revokeConsent(ctx: ServiceContext, id: string, at: Date): Promise<boolean> {
  const owned = await named('compliance.revokeConsent', () =>
    ctx.db.contactConsent.updateMany({ where: { id, userId: ctx.user.id, revokedAt: null }, data: { revokedAt: at } }),
  );
  return owned.count > 0 || (await findConsent(ctx, id, { select: { id: true } })) !== null;
}
