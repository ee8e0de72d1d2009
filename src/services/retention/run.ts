import type { ServiceEnv } from '../context.js';
import { dropExpiredMonths, makeMonthsAhead } from './partitions.js';
import { purgeShortLived } from './purges.js';

/** One retention run: the months made ahead, those past their retention dropped, the short-lived records purged. */
export async function runRetention(env: ServiceEnv): Promise<void> {
  await makeMonthsAhead(env);
  await dropExpiredMonths(env);
  const purged = await purgeShortLived(env);
  if (purged.deliveries || purged.idempotencyKeys) env.log.info(purged, 'retention: purged');
}
