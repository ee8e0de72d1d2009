import type { ServiceEnv } from '../context.js';
import { dropExpiredMonths, dropExpiredRecordMonths, dropExpiredWebhookMonths, makeMonthsAhead } from './partitions.js';
import { pseudonymiseExpiredCalls } from './pseudonymise.js';
import { purgeShortLived } from './purges.js';

/**
 * One retention run: the months made ahead, those past their retention dropped (calls, the ledger, webhook logs), calls past their
 * customer's setting pseudonymised, the short-lived records purged. A step that fails (a lock not had, a
 * month's partition that cannot be attached) is logged and does not stop the others; the run then fails,
 * and the next period's tries again.
 */
export async function runRetention(env: ServiceEnv): Promise<void> {
  const steps: [string, () => Promise<unknown>][] = [
    ['months ahead', () => makeMonthsAhead(env)],
    ['expired months', () => dropExpiredMonths(env)],
    ['expired record months', () => dropExpiredRecordMonths(env)],
    ['expired webhook months', () => dropExpiredWebhookMonths(env)],
    ['pseudonymisation', () => pseudonymiseExpiredCalls(env)],
    ['purges', () => purgeShortLived(env)],
  ];
  let failed: unknown;
  for (const [step, run] of steps) {
    try {
      env.log.info({ step, result: await run() }, 'retention step done');
    } catch (error) {
      env.log.error({ err: error, step }, 'retention step failed');
      failed ??= error;
    }
  }
  if (failed) throw failed;
}
