import { startCampaign } from '../campaigns/start.js';
import { isStartRefusal, pauseForReason } from '../campaigns/states.js';
import type { ServiceEnv } from '../context.js';
import { ConflictError } from '../errors.js';
import { foldReportTotals } from '../results/reports.js';
import { readPendingResult } from './pending-result.js';
import { retryOnConflict } from './retry.js';
import { clearEndedMarks, closeCancelled, expiredAttempts, runningCampaigns, scheduledToStart } from './store/sweep.js';
import type { CallResult } from '../voice/providers/telephony.js';

// What time alone changes, repaired by every worker now and then: calls whose lease ran out, scheduled
// campaigns whose start has come, cancelled campaigns' waiting contacts, and running campaigns that
// nobody woke. It also folds the report totals the dialer's writes add rows to.

/** What the sweep needs of the dialer it runs in. */
export interface SweepHost {
  /** `at`: when the call ended, when known. */
  report(result: CallResult, at?: Date): void;
  /** Resolves once every result reported so far is written (not those reported later). */
  written(): Promise<void>;
  /** Live updates: the campaign changed. */
  announce(campaignId: string): void;
  wake(campaignId: string): void;
}

/**
 * Calls whose lease ran out get the result their provider left for them, or else count as failed
 * (either way their slot comes back), ended when a worker heard them end if one did, scheduled campaigns whose start has come begin, cancelled
 * campaigns close their waiting contacts, and every running campaign gets a tick. Returns the running
 * campaigns it woke.
 */
export async function sweep(env: ServiceEnv, now: Date, host: SweepHost): Promise<string[]> {
  await clearEndedMarks(env.sql);
  for (const { id, pendingResult, endedAt } of await expiredAttempts(env.sql, now)) {
    host.report(
      pendingResult
        ? readPendingResult(pendingResult)
        : { attemptId: id, outcome: 'failed', durationSeconds: 0, disconnectReason: 'no_report' },
      endedAt ?? now,
    );
  }
  await host.written();
  for (const campaignId of await closeCancelled(env.sql, now)) host.announce(campaignId);
  for (const campaignId of await scheduledToStart(env.db, now)) {
    await startScheduled(env, campaignId, now);
    host.announce(campaignId);
  }
  const running = await runningCampaigns(env.db);
  for (const campaignId of running) host.wake(campaignId);
  await foldReportTotals(env);
  return running;
}

/** A scheduled campaign whose time has come starts; one that cannot is paused with the reason. */
async function startScheduled(env: ServiceEnv, campaignId: string, now: Date): Promise<void> {
  try {
    await retryOnConflict(() => env.sql.transaction((tx) => startCampaign(tx, campaignId, now)));
  } catch (error) {
    if (!(error instanceof ConflictError) || !isStartRefusal(error.reason)) throw error;
    await pauseForReason(env.sql, campaignId, error.reason);
  }
}
