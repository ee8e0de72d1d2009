import type { SqlSession } from '../../db/sql.js';
import type { FieldErrors } from '../errors.js';
import { INVALID_PHONE_MESSAGE, toE164 } from '../phone.js';
import { referencedAgent, referencedGroup, type ReferencedAgent, type ReferencedGroup } from './store.js';

// The agent and contact group a campaign names must be the caller's own; another user's id is a field
// error in the body, not a 404, since the campaign itself exists. Each check adds to `errors`, so that
// one answer names every bad field.

/** The user's active agent, or null with a field error on `agent_id`. */
export async function checkAgent(tx: SqlSession, userId: string, agentId: string, errors: FieldErrors): Promise<ReferencedAgent | null> {
  const agent = await referencedAgent(tx, userId, agentId);
  if (!agent) errors.agent_id = ['No agent with this id.'];
  else if (!agent.isActive) errors.agent_id = [`The agent "${agent.name}" is archived; choose an active agent.`];
  return agent?.isActive ? agent : null;
}

/**
 * The user's group, or null with a field error on `contact_group_id`. The row stays share-locked until the
 * transaction ends, so a concurrent delete of the group waits for the campaign that names it (and is
 * then refused or takes the draft with it) instead of breaking its insert. An archived group is gone for
 * the user, like a deleted one.
 */
export async function checkGroup(tx: SqlSession, userId: string, groupId: string, errors: FieldErrors): Promise<ReferencedGroup | null> {
  const group = await referencedGroup(tx, userId, groupId);
  if (!group) errors.contact_group_id = ['No contact group with this id.'];
  return group ?? null;
}

/** Each A/B variant's agent must be one of the user's active agents: a field error on `variants.<index>.agent_id` otherwise. */
export async function checkVariantAgents(
  tx: SqlSession,
  userId: string,
  variants: readonly { agent_id: string }[],
  errors: FieldErrors,
): Promise<void> {
  for (const [index, variant] of variants.entries()) {
    const problems: FieldErrors = {};
    await checkAgent(tx, userId, variant.agent_id, problems);
    if (problems.agent_id) errors[`variants.${index}.agent_id`] = problems.agent_id;
  }
}

interface Descriptions {
  agent_name?: string | undefined;
  agent_phone_number?: string | undefined;
  contact_group_name?: string | undefined;
  contact_group_total?: bigint | undefined;
}

/**
 * v1 clients may send what they believe the agent and group are (names, a number, the group's size);
 * each one given must match, so that a campaign is never created on the wrong agent or group.
 */
export function checkDescriptions(
  given: Descriptions,
  agent: ReferencedAgent,
  group: ReferencedGroup,
  country: string,
  errors: FieldErrors,
): void {
  if (given.agent_name !== undefined && given.agent_name.trim() !== agent.name) {
    errors.agent_name = [`Does not match the agent's name ("${agent.name}").`];
  }
  if (given.agent_phone_number !== undefined) {
    const number = toE164(given.agent_phone_number, country);
    if (!number) errors.agent_phone_number = [INVALID_PHONE_MESSAGE];
    else if (!agent.phoneNumbers.some((phone) => phone.number === number)) {
      errors.agent_phone_number = ["Is not one of the agent's phone numbers."];
    }
  }
  if (given.contact_group_name !== undefined && given.contact_group_name.trim() !== group.name) {
    errors.contact_group_name = [`Does not match the contact group's name ("${group.name}").`];
  }
  if (given.contact_group_total !== undefined && given.contact_group_total !== BigInt(group.total)) {
    errors.contact_group_total = [`Does not match the contact group's total (${group.total}).`];
  }
}
