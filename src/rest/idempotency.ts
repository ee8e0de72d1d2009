import type { IdempotentSurface } from '../http/idempotency.js';
import { errorResponse } from '../http/errors.js';

/** On v1 an answer changed something when it succeeded: every refusal (4xx) leaves everything as it was. */
export const v1Idempotency: IdempotentSurface = {
  changed: (status) => status >= 200 && status < 300,
  refusal: errorResponse,
};
