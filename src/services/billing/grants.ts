import { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import { int64, parseInput, uuid, type RawInput } from '../validation.js';
import { MAX_CREDIT_CENTS, moveMoney, openAccount, type TransactionQuery } from './ledger.js';
import { userExists } from '../users/store.js';
import * as store from './store.js';

// Credits an administrator grants by hand: a top-up paid outside Stripe, plan credits, or a correction.

export const GRANT_KINDS = ['top_up', 'included_grant', 'adjustment'] as const;

const DEFAULT_DESCRIPTIONS: Record<(typeof GRANT_KINDS)[number], string> = {
  top_up: 'Credit top-up',
  included_grant: 'Included plan credits',
  adjustment: 'Balance adjustment',
};

export const grantCreditsInput = z
  .object({
    user_id: uuid,
    kind: z.enum(GRANT_KINDS),
    amount_cents: int64.pipe(z.bigint().min(-MAX_CREDIT_CENTS).max(MAX_CREDIT_CENTS)),
    description: z.string().trim().max(500).optional(),
  })
  .superRefine((input, ctx) => {
    if (input.kind !== 'adjustment' && input.amount_cents < 1n) {
      ctx.addIssue({ code: 'custom', path: ['amount_cents'], message: 'Ensure this value is greater than or equal to 1.' });
    } else if (input.amount_cents === 0n) {
      ctx.addIssue({ code: 'custom', path: ['amount_cents'], message: 'An adjustment may not be zero.' });
    }
  });
export type GrantCreditsInput = RawInput<typeof grantCreditsInput>;

/**
 * Administrators only. `top_up` and `adjustment` change the purchased balance, `included_grant` the
 * included credits. A negative adjustment may not take the purchased balance below zero (moveMoney
 * refuses it). Returns the ledger row, read once the grant is committed.
 */
export async function grantCredits<Q extends TransactionQuery = {}>(
  ctx: ServiceContext,
  raw: GrantCreditsInput,
  query: Q = {} as Q,
): Promise<Prisma.CreditTransactionGetPayload<Q>> {
  if (!ctx.user.isAdmin) throw new ForbiddenError();
  const input = parseInput(grantCreditsInput, raw);
  if (!(await userExists(ctx.db, input.user_id))) throw ValidationError.field('user_id', 'No user has this id.');
  const included = input.kind === 'included_grant';

  const [grant] = await ctx.sql.transaction(async (tx) =>
    moveMoney(tx, ctx.clock, await openAccount(tx, ctx.clock, input.user_id), [
      {
        userId: input.user_id,
        kind: input.kind,
        purchasedCents: included ? 0n : input.amount_cents,
        includedCents: included ? input.amount_cents : 0n,
        description: input.description || DEFAULT_DESCRIPTIONS[input.kind],
      },
    ]),
  );
  const row = await store.findTransaction(ctx.db, input.user_id, grant!.id, query);
  // Gone only if the user was deleted meanwhile, taking their ledger with them.
  if (!row) throw new NotFoundError('CreditTransaction');
  return row;
}
