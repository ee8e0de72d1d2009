import type { SqlSession } from '../../db/sql.js';
import type { Campaign, CampaignStatus } from '../../generated/prisma/client.js';
import { ConflictError, found } from '../errors.js';
import { staleRegistries } from '../registries/registries.js';
import { lockCampaign, refusal } from './states.js';
import { aiDisclosure, AI_DISCLOSURE_SENTENCE, carriesDisclosure } from '../calling-rules/disclosure.js';
import { calleeRegion, placeOfNumber } from '../calling-rules/places.js';
import { BRAIN_ENGINE } from '../voice/brain/conversation.js';
import { agentForStart, callablePlaces, enrollContacts, hasCallableContact, lockGroupOf, markRunning } from './store.js';

// Starting a campaign: the one step shared by dispatch (now, or resuming) and the dialer (when a
// scheduled campaign's time comes), over the one transaction type both run in.

export const STARTABLE_STATUSES: readonly CampaignStatus[] = ['draft', 'scheduled', 'paused'];

/**
 * Locks the campaign's contact group, then the campaign (both FOR NO KEY UPDATE): the order deleteGroup takes
 * them in, so the two never wait on each other, and the group cannot be deleted under a campaign that
 * is starting.
 */
export async function lockForStart(tx: SqlSession, id: string): Promise<Campaign> {
  const groupId = found(await lockGroupOf(tx, id), 'Campaign');
  const campaign = await lockCampaign(tx, id);
  if (campaign.contactGroupId !== groupId) {
    throw new ConflictError('The campaign was edited while it was starting; try again.', 'campaign_changed');
  }
  return campaign;
}

/**
 * Refuses a campaign that could not place a call (an archived agent, no number, nobody left to call), or
 * must not: (solicitation) a national registry's copy too old to rely on, or a provider-hosted agent whose
 * opening line does not disclose it is an AI, calling people where a rule in force at `now` requires it.
 */
export async function assertCanCall(tx: SqlSession, campaign: Campaign, now: Date): Promise<void> {
  const agent = await agentForStart(tx, campaign.agentId);
  if (!agent.isActive) {
    throw new ConflictError(`The agent "${agent.name}" is archived; choose an active agent.`, 'agent_inactive');
  }
  if (agent.numbers === 0) {
    throw new ConflictError(`The agent "${agent.name}" has no phone number to call from.`, 'agent_has_no_phone_number');
  }
  if (agent.provisioningState !== 'ready') {
    throw new ConflictError(
      agent.provisioningState === 'failed'
        ? `The agent "${agent.name}" could not be provisioned at the voice provider: ${agent.provisioningError ?? 'no reason given'}. Fix it and retry its provisioning.`
        : `The agent "${agent.name}" is still being provisioned at the voice provider; dispatch again once it is ready.`,
      'agent_not_ready',
    );
  }
  if (!(await hasCallableContact(tx, campaign))) {
    throw new ConflictError(
      'No contact is left to call: the group has no active contact this campaign has not finished with.',
      'no_callable_contacts',
    );
  }
  const stale = campaign.purpose === 'solicitation' ? await staleRegistries(tx, now) : null;
  if (stale) {
    throw new ConflictError(`A solicitation campaign cannot call until the registry is refreshed: ${stale}.`, 'registry_stale');
  }
  // The built-in agent says the disclosure itself where it is required; a provider's agent says what its begin message says.
  if (agent.responseEngineType !== BRAIN_ENGINE && !carriesDisclosure(agent.beginMessage)) {
    const requiring = await disclosureRegions(tx, campaign, now);
    if (requiring.length) {
      throw new ConflictError(
        `The agent "${agent.name}" is hosted by the voice provider and its begin message does not say that an AI is calling, ` +
          `which the law requires for contacts of this campaign in ${requiring.map((r) => `${r.region} (${r.rule})`).join(', ')}. ` +
          `Make its begin message open with: "${AI_DISCLOSURE_SENTENCE}"`,
        'ai_disclosure_missing',
      );
    }
  }
}

/** The regions of the campaign's callable contacts where a rule in force at `now` requires the AI disclosure, with the rule. */
async function disclosureRegions(tx: SqlSession, campaign: Campaign, now: Date): Promise<{ region: string; rule: string }[]> {
  const found = new Map<string, string>();
  for (const { phoneNumber, region: own } of await callablePlaces(tx, campaign)) {
    const region = calleeRegion(own, placeOfNumber(phoneNumber));
    const rule = region ? aiDisclosure(region, now).rule : undefined;
    if (region && rule) found.set(region, rule.name);
  }
  return [...found].sort(([a], [b]) => a.localeCompare(b)).map(([region, rule]) => ({ region, rule }));
}

/**
 * Starts (or resumes) a campaign now, inside the caller's transaction; dispatch calls it, and the
 * dialer calls it when a scheduled campaign's `started_at` arrives. Contract:
 * - Takes the contact group's lock, then the campaign's (FOR NO KEY UPDATE). Call it holding no lock on
 *   another campaign or group, and take campaign_contacts rows only after it.
 * - A running campaign is returned unchanged. A draft, scheduled or paused one becomes `running`
 *   (`paused_reason` cleared; `started_at` = `now` on a first start, kept on a resume) and the group's
 *   contacts not yet enrolled are enrolled (enrollContacts): callable ones `pending`, the rest `done`.
 * - Refusals are ConflictErrors, and the caller must let its transaction roll back: `campaign_completed`,
 *   `campaign_cancelled`, `agent_inactive`, `agent_has_no_phone_number`, `agent_not_ready`, `no_callable_contacts`, `registry_stale`,
 *   `ai_disclosure_missing`, and the
 *   rare `campaign_changed` (its group was edited meanwhile; try again). A scheduled campaign refused
 *   at its time should be paused with the reason (pauseForReason), so the user sees why.
 * - Credits are not checked here: the dialer's holds refuse calls the balance cannot cover.
 * - After commit, nobody has been told: dispatch wakes the dialer; the dialer just goes on dialing.
 */
export async function startCampaign(tx: SqlSession, campaignId: string, now: Date): Promise<Campaign> {
  const campaign = await lockForStart(tx, campaignId);
  if (campaign.status === 'running') return campaign;
  if (!STARTABLE_STATUSES.includes(campaign.status)) throw refusal(campaign.status, 'It cannot start again.');
  await assertCanCall(tx, campaign, now);
  const startedAt = campaign.status === 'paused' && campaign.startedAt ? campaign.startedAt : now;
  await markRunning(tx, campaign.id, startedAt);
  await enrollContacts(tx, campaign.id, now);
  return { ...campaign, status: 'running', pausedReason: null, startedAt };
}
