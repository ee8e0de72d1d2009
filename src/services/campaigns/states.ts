import type { SqlSession } from '../../db/sql.js';
import type { Campaign, CampaignStatus } from '../../generated/prisma/client.js';
import { ConflictError, found, type ConflictReason } from '../errors.js';
import { lockCampaignRow, pauseRow, pauseRunningOfAgent } from './store.js';

// The campaign state machine: draft -> scheduled -> running <-> paused -> completed, and any state that
// is not final -> cancelled. A refused transition is a ConflictError whose reason names the state in the
// way (`campaign_running`, `campaign_completed`, ...). Repeating a transition that already happened
// (pausing a paused campaign, dispatching a running one) is a success that changes nothing.

export const EDITABLE_STATUSES: readonly CampaignStatus[] = ['draft', 'paused', 'running'];

/** Why a start (dispatch, resume, or a scheduled start coming due) is refused, besides the campaign's state. */
export const START_REFUSALS = [
  'agent_inactive',
  'agent_has_no_phone_number',
  'agent_not_ready',
  'no_callable_contacts',
  'registry_stale',
  'ai_disclosure_missing',
] as const satisfies readonly ConflictReason[];

/** Why dispatch or resume is refused (409), in the order they are checked. */
export const DISPATCH_REFUSALS = [
  'campaign_completed',
  'campaign_cancelled',
  'insufficient_credits',
  ...START_REFUSALS,
] as const satisfies readonly ConflictReason[];

/** Why a campaign is paused: the user, the dialer, or a scheduled start that was refused (its reason). */
export const PAUSED_REASONS = [
  'user_requested',
  'insufficient_credits',
  'spend_cap_reached',
  'agent_archived',
  'high_failure_rate',
  ...START_REFUSALS,
] as const;
export type PausedReason = (typeof PAUSED_REASONS)[number];

/** A start refusal the dialer records as the paused reason of a scheduled campaign it could not start. */
export const isStartRefusal = (reason: string | undefined): reason is (typeof START_REFUSALS)[number] =>
  (START_REFUSALS as readonly (string | undefined)[]).includes(reason);

const STATE: Record<CampaignStatus, string> = {
  draft: 'This campaign is a draft.',
  scheduled: 'This campaign is scheduled.',
  running: 'This campaign is running.',
  paused: 'This campaign is paused.',
  completed: 'This campaign is completed.',
  cancelled: 'This campaign is cancelled.',
};

export function refusal(status: CampaignStatus, rule: string): ConflictError {
  return new ConflictError(`${STATE[status]} ${rule}`, `campaign_${status}`);
}

/**
 * Locks the campaign row (FOR NO KEY UPDATE) until the transaction ends and reads it, so that its state
 * cannot change between the check and the write. Lock order everywhere: contact group, then campaign,
 * then its campaign_contacts rows. NO KEY lets the foreign-key checks of rows that point at the campaign
 * through, so a transaction that holds a credit account and writes such rows never waits for a tick that
 * holds the campaign and waits for that account.
 */
export async function lockCampaign(tx: SqlSession, id: string): Promise<Campaign> {
  return found(await lockCampaignRow(tx, id), 'Campaign');
}

/**
 * Pauses a running or scheduled campaign with a reason, inside the caller's transaction: the user's pause,
 * and the dialer's (`insufficient_credits` when a hold is refused, `high_failure_rate`, and a scheduled
 * campaign whose start was refused when its time came, with the refusal's reason), so that the user sees
 * why it is not calling; dispatch resumes it. Returns false when it was neither running nor scheduled.
 */
export function pauseForReason(tx: SqlSession, id: string, reason: PausedReason): Promise<boolean> {
  return pauseRow(tx, id, reason);
}

/** Pauses the user's running campaigns on an agent with a reason (`agent_archived`); their ids. */
export function pauseRunningCampaignsOfAgent(tx: SqlSession, userId: string, agentId: string, reason: PausedReason): Promise<string[]> {
  return pauseRunningOfAgent(tx, userId, agentId, reason);
}
