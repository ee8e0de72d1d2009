import { z } from 'zod';
import type { CreditTransaction } from '../../generated/prisma/client.js';
import { CreditTransactionKind } from '../../generated/prisma/enums.js';
import type { CreditBalance, Receipt } from '../../services/billing/credits.js';
import { datetime, id, iso } from './common.js';

// The v1 shapes of the credit balance (contract 2.8), transactions and receipts (2.9). The ledger keeps
// every amount within 2^53 - 1 (MAX_CREDIT_CENTS), so Number() is exact.

const cents = z.int();

export const v1CreditBalance = z
  .object({
    balance_cents: cents.describe('Purchased credits, in cents.').meta({ examples: [12_450] }),
    effective_balance_cents: cents
      .describe('What calls may still spend: both balances minus what calls in flight hold.')
      .meta({ examples: [13_950] }),
    included_remaining_cents: cents.describe('Plan credits left, in cents; calls spend these first.').meta({ examples: [2_000] }),
  })
  .meta({ id: 'CreditBalance' });

export const v1CreditTransaction = z
  .object({
    id,
    kind: z.enum(CreditTransactionKind),
    amount_cents: cents.describe('Signed change to purchased plus included credits.').meta({ examples: [-42] }),
    balance_after_cents: cents.describe('Purchased credits after this transaction.').meta({ examples: [12_408] }),
    included_after_cents: cents.describe('Included credits after this transaction.').meta({ examples: [0] }),
    description: z.string(),
    campaign_id: id.nullable(),
    call_attempt_id: id.nullable(),
    receipt_url: z.string().nullable(),
    invoice_url: z.string().nullable(),
    created_at: datetime,
  })
  .meta({ id: 'CreditTransaction' });

export const v1CreditTransactionList = z
  .object({ transactions: z.array(v1CreditTransaction), has_more: z.boolean() })
  .meta({ id: 'CreditTransactionList' });

export const v1Receipt = z
  .object({
    url: z.string().describe('The receipt when there is one, else the invoice.'),
    receipt_url: z.string().nullable(),
    invoice_url: z.string().nullable(),
  })
  .meta({ id: 'Receipt' });

export function toV1CreditBalance(b: CreditBalance): z.input<typeof v1CreditBalance> {
  return {
    balance_cents: Number(b.balanceCents),
    effective_balance_cents: Number(b.effectiveBalanceCents),
    included_remaining_cents: Number(b.includedRemainingCents),
  };
}

export function toV1CreditTransaction(t: CreditTransaction): z.input<typeof v1CreditTransaction> {
  return {
    id: t.id,
    kind: t.kind,
    amount_cents: Number(t.amountCents),
    balance_after_cents: Number(t.balanceAfterCents),
    included_after_cents: Number(t.includedAfterCents),
    description: t.description,
    campaign_id: t.campaignId,
    call_attempt_id: t.callAttemptId,
    receipt_url: t.receiptUrl,
    invoice_url: t.invoiceUrl,
    created_at: iso(t.createdAt),
  };
}

export function toV1Receipt(r: Receipt): z.input<typeof v1Receipt> {
  return { url: r.url, receipt_url: r.receiptUrl, invoice_url: r.invoiceUrl };
}
