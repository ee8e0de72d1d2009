import { z } from 'zod';
import type { SqlSession } from '../../db/sql.js';
import type { ServiceContext } from '../context.js';
import { ForbiddenError, NotFoundError, ValidationError, type FieldErrors } from '../errors.js';
import { userExists } from '../users/store.js';
import { parseInput, uuid, type RawInput } from '../validation.js';
import { instant } from './inputs.js';
import * as store from './store.js';

// No silent off switch: a campaign's `regional_rules: false` turns every regional rule (hours, days,
// holidays, frequency caps) off only while an admin's exemption for its customer is in force. An admin
// grants one with who, why and until when; the campaign may be set so only while one is in force, and
// the dialer applies the rules again from the moment it expires. Every call placed with the rules off
// names the exemption it went out under (call_attempts.regional_rule_exemption_id).

/** The longest an exemption may last: a year, so that every exemption is looked at again. */
const MAX_DAYS = 366;

export const exemptionInput = z.object({
  user_id: uuid.describe('The customer it is for.'),
  reason: z.string().trim().min(1).max(1000).describe('Why the regional rules do not cover these calls.'),
  expires_at: instant.describe(`When it stops applying: in the future, at most ${MAX_DAYS} days ahead.`),
});

/** Whether the regional rules apply to a campaign's calls: unless it turned them off while an exemption is in force. */
export const regionalRulesApply = (regionalRules: boolean, exempt: boolean) => regionalRules || !exempt;

/** Admins only: grants the customer an exemption, recorded with the admin who granted it. */
export async function grantExemption(ctx: ServiceContext, raw: RawInput<typeof exemptionInput>, query: store.ExemptionQuery = {}) {
  if (!ctx.user.isAdmin) throw new ForbiddenError();
  const input = parseInput(exemptionInput, raw);
  const now = ctx.clock.now().getTime();
  const errors: FieldErrors = {};
  if (input.expires_at.getTime() <= now) errors.expires_at = ['Must be in the future.'];
  else if (input.expires_at.getTime() > now + MAX_DAYS * 86_400_000) errors.expires_at = [`Must be at most ${MAX_DAYS} days ahead.`];
  if (!(await userExists(ctx.db, input.user_id))) errors.user_id = ['No user has this id.'];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return store.insertExemption(
    ctx,
    { userId: input.user_id, grantedBy: ctx.user.id, reason: input.reason, expiresAt: input.expires_at },
    query,
  );
}

/** A customer's exemptions, latest to expire first: an admin's of any customer, a customer's own. */
export function listExemptions<Q extends store.ExemptionQuery>(ctx: ServiceContext, userId: string | undefined, query: Q) {
  if (userId !== undefined && userId !== ctx.user.id && !ctx.user.isAdmin) throw new NotFoundError('User');
  return store.findExemptions(ctx, userId ?? ctx.user.id, query);
}

/** Adds the field error of `regional_rules: false` when no exemption of the customer is in force now. */
export async function checkRegionalRulesOff(
  sql: SqlSession,
  userId: string,
  regionalRules: boolean | undefined,
  now: Date,
  errors: FieldErrors,
): Promise<void> {
  if (regionalRules !== false || (await store.exemptionAt(sql, userId, now))) return;
  errors.regional_rules = ['Turning the regional rules off needs an exemption granted by an admin, and none is in force for this account.'];
}
