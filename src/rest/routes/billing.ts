import { z } from 'zod';
import * as credits from '../../services/billing/credits.js';
import { paginationQuery } from '../pagination.js';
import { defineRoute } from '../route.js';
import {
  toV1CreditBalance,
  toV1CreditTransaction,
  toV1Receipt,
  v1CreditBalance,
  v1CreditTransactionList,
  v1Receipt,
} from '../serializers/billing.js';
import { id } from '../serializers/common.js';

export const billingRoutes = [
  defineRoute({
    method: 'GET',
    path: '/billing/credits/',
    operationId: 'getCreditBalance',
    summary: 'Credit balance',
    tag: 'Billing & Credits',
    status: 200,
    response: v1CreditBalance,
    handler: async (_input, ctx) => toV1CreditBalance(await credits.getBalance(ctx)),
  }),
  defineRoute({
    method: 'GET',
    path: '/billing/transactions/',
    operationId: 'listCreditTransactions',
    summary: 'List credit transactions, newest first',
    tag: 'Billing & Credits',
    query: paginationQuery,
    status: 200,
    response: v1CreditTransactionList,
    handler: async ({ query }, ctx) => {
      // One row beyond the page tells whether more exist.
      const rows = await credits.listTransactions(ctx, {}, { take: query.limit + 1, skip: query.offset });
      return { transactions: rows.slice(0, query.limit).map(toV1CreditTransaction), has_more: rows.length > query.limit };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/billing/transactions/{id}/receipt/',
    operationId: 'getCreditTransactionReceipt',
    summary: 'Receipt links of a transaction (404 when it has neither a receipt nor an invoice)',
    tag: 'Billing & Credits',
    params: z.object({ id }),
    status: 200,
    response: v1Receipt,
    handler: async ({ params }, ctx) => toV1Receipt(await credits.getReceipt(ctx, params.id)),
  }),
];
