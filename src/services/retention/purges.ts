import type { ServiceEnv } from '../context.js';
import { purgeDeliveries } from '../dialer/store/call-events.js';
import { purgeExpiredKeys } from '../idempotency/idempotency.js';

/**
 * Providers' webhook deliveries (Stripe, Retell, Twilio) are remembered to drop a repeat of an event:
 * providers retry for up to three days (Stripe), so a month is ample.
 */
export const DELIVERIES_KEPT_DAYS = 30;

/** The short-lived records purged on their own schedules: providers' deliveries and expired idempotency keys. */
export async function purgeShortLived(env: ServiceEnv, batch = 10_000): Promise<{ deliveries: number; idempotencyKeys: number }> {
  let deliveries = 0;
  for (;;) {
    const n = await purgeDeliveries(env.sql, DELIVERIES_KEPT_DAYS, batch);
    deliveries += n;
    if (n < batch) break;
  }
  return { deliveries, idempotencyKeys: await purgeExpiredKeys(env, batch) };
}
