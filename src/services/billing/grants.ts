import { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { ForbiddenError, ValidationError } from '../errors.js';
import { int64, parseInput, uuid, type RawInput } from '../validation.js';
import { appendEntry, ledgerTransaction, lockAccount, MAX_CREDIT_CENTS, type TransactionQuery } from './ledger.js';

// Credits an administrator grants by hand: a top-up paid outside Stripe, plan credits, or a correction.

export const GRANT_KINDS = ['top_up', 'included_grant', 'adjustment'] as const;

const DEFAULT_DESCRIPTIONS: Record<(typeof GRANT_KINDS)[number], string> = {
  top_up: 'Credit top-up',
  included_grant: 'Included plan credits',
  adjustment: 'Balance adjustment',
};

export const grantCreditsInput = z
  .object({
    userId: uuid,
    kind: z.enum(GRANT_KINDS),
    amountCents: int64.pipe(z.bigint().min(-MAX_CREDIT_CENTS).max(MAX_CREDIT_CENTS)),
    description: z.string().trim().max(500).optional(),
  })
  .superRefine((input, ctx) => {
    if (input.kind !== 'adjustment' && input.amountCents < 1n) {
      ctx.addIssue({ code: 'custom', path: ['amountCents'], message: 'Ensure this value is greater than or equal to 1.' });
    } else if (input.amountCents === 0n) {
      ctx.addIssue({ code: 'custom', path: ['amountCents'], message: 'An adjustment may not be zero.' });
    }
  });
export type GrantCreditsInput = RawInput<typeof grantCreditsInput>;

/**
 * Administrators only. `top_up` and `adjustment` change the purchased balance, `included_grant` the
 * included credits. A negative adjustment may not take the purchased balance below zero.
 */
export async function grantCredits<Q extends TransactionQuery = {}>(
  ctx: ServiceContext,
  raw: GrantCreditsInput,
  query: Q = {} as Q,
): Promise<Prisma.CreditTransactionGetPayload<Q>> {
  if (!ctx.user.isAdmin) throw new ForbiddenError();
  const input = parseInput(grantCreditsInput, raw);
  const user = await ctx.db.user.findUnique({ where: { id: input.userId }, select: { id: true } });
  if (!user) throw ValidationError.field('userId', 'No user has this id.');
  const included = input.kind === 'included_grant';

  return ledgerTransaction(ctx.db, async (tx) => {
    const account = await lockAccount(tx, input.userId);
    if (account.balanceCents + input.amountCents < 0n) {
      throw ValidationError.field('amountCents', `This would take the purchased balance below zero; it is ${account.balanceCents} cents.`);
    }
    return appendEntry(
      tx,
      account,
      {
        userId: input.userId,
        kind: input.kind,
        purchasedCents: included ? 0n : input.amountCents,
        includedCents: included ? input.amountCents : 0n,
        description: input.description || DEFAULT_DESCRIPTIONS[input.kind],
        createdAt: ctx.clock.now(),
      },
      query,
    );
  });
}
