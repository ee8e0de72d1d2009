import type { IdempotentSurface } from '../../http/idempotency.js';
import { httpStatusOf, json } from '../../http/errors.js';
import { AppError } from '../../services/errors.js';
import { graphQLErrorOf } from '../errors.js';

/**
 * On GraphQL an answer changed something when a root field of it has a value: a request refused whole
 * (a parse or validation error, every mutation refused) has none, and its key is let go. A mutation that
 * ran beside one that was refused keeps the answer, so that a repeat does not run it twice.
 */
export const graphqlIdempotency: IdempotentSurface = {
  changed(status, body) {
    if (status !== 200) return false;
    try {
      const { data } = JSON.parse(body) as { data?: Record<string, unknown> | null };
      return Boolean(data && Object.values(data).some((value) => value !== null));
    } catch {
      return false;
    }
  },
  refusal(error, log) {
    const { message, extensions } = graphQLErrorOf(log, error);
    return json(error instanceof AppError ? httpStatusOf(error) : 500, { errors: [{ message, extensions }] });
  },
};
