import type { ServiceEnv } from '../context.js';
import { progressCounts } from './store.js';

// How far campaigns have got, counted from their enrolled contacts (campaign_contacts).

export interface CampaignProgress {
  /** Contacts enrolled so far (a campaign enrolls its group's contacts when it starts or resumes). */
  total: number;
  pending: number;
  dialing: number;
  done: number;
  reached: number;
  /** Done without reaching the contact: retries used up, or an outcome not worth retrying (`not_reached`). */
  notReached: number;
  doNotCall: number;
  /** Skipped: a consent the campaign requires is missing. */
  consentMissing: number;
  invalid: number;
  cancelled: number;
}

const OUTCOME_COUNTS: Record<string, keyof CampaignProgress> = {
  reached: 'reached',
  not_reached: 'notReached',
  do_not_call: 'doNotCall',
  consent_missing: 'consentMissing',
  invalid: 'invalid',
  cancelled: 'cancelled',
};

export const noProgress = (): CampaignProgress => ({
  total: 0,
  pending: 0,
  dialing: 0,
  done: 0,
  reached: 0,
  notReached: 0,
  doNotCall: 0,
  consentMissing: 0,
  invalid: 0,
  cancelled: 0,
});

/**
 * Progress of each campaign, in one grouped query whatever their number. Callers pass ids of campaigns
 * they may read; a campaign with nothing enrolled gets zeros.
 */
export async function campaignProgress(env: Pick<ServiceEnv, 'db'>, campaignIds: string[]): Promise<Map<string, CampaignProgress>> {
  const groups = await progressCounts(env, campaignIds);
  const result = new Map(campaignIds.map((id) => [id, noProgress()]));
  for (const group of groups) {
    const progress = result.get(group.campaignId)!;
    const count = group._count._all;
    progress.total += count;
    progress[group.state] += count;
    const outcome = group.outcome ? OUTCOME_COUNTS[group.outcome] : undefined;
    if (outcome) progress[outcome] += count;
  }
  return result;
}
