import type { ServiceEnv } from '../context.js';
import { dropExpiredMonths, makeMonthsAhead } from './partitions.js';
import { pseudonymiseExpiredCalls } from './pseudonymise.js';
import { purgeShortLived } from './purges.js';

/**
 * One retention run: the months made ahead, those past their retention dropped, calls past their
 * customer's setting pseudonymised, the short-lived records purged.
 */
export async function runRetention(env: ServiceEnv): Promise<void> {
  await makeMonthsAhead(env);
  await dropExpiredMonths(env);
  const pseudonymised = await pseudonymiseExpiredCalls(env);
  if (pseudonymised) env.log.info({ calls: pseudonymised }, 'retention: calls pseudonymised');
  const purged = await purgeShortLived(env);
  if (purged.deliveries || purged.idempotencyKeys) env.log.info(purged, 'retention: purged');
}
