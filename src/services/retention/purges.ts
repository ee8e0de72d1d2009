import type { ServiceEnv } from '../context.js';
import { purgeExpiredKeys } from '../idempotency/idempotency.js';

/**
 * The short-lived records purged row by row on their own schedule: expired idempotency keys. (Providers'
 * webhook deliveries, kept by month, go with their months: dropExpiredWebhookMonths.)
 */
export async function purgeShortLived(env: ServiceEnv, batch = 10_000): Promise<{ idempotencyKeys: number }> {
  return { idempotencyKeys: await purgeExpiredKeys(env, batch) };
}
