import type { SqlSession } from '../../db/sql.js';
import type { FieldErrors } from '../errors.js';
import { INVALID_PHONE_MESSAGE, toE164 } from '../phone.js';
import { referencedAgent, referencedGroup, type ReferencedAgent, type ReferencedGroup } from './store.js';

// The agent and contact group a campaign names must be the caller's own; another user's id is a field
// error in the body, not a 404, since the campaign itself exists. Each check adds to `errors`, so that
// one answer names every bad field.


/** The user's active agent, or null with a field error on `agentId`. */
export async function checkAgent(tx: SqlSession, userId: string, agentId: string, errors: FieldErrors): Promise<ReferencedAgent | null> {
  const agent = await referencedAgent(tx, userId, agentId);
  if (!agent) errors.agentId = ['No agent with this id.'];
  else if (!agent.isActive) errors.agentId = [`The agent "${agent.name}" is archived; choose an active agent.`];
  return agent?.isActive ? agent : null;
}

/**
 * The user's group, or null with a field error on `contactGroupId`. The row stays share-locked until the
 * transaction ends, so a concurrent delete of the group waits for the campaign that names it (and is
 * then refused or takes the draft with it) instead of breaking its insert. An archived group is gone for
 * the user, like a deleted one.
 */
export async function checkGroup(tx: SqlSession, userId: string, groupId: string, errors: FieldErrors): Promise<ReferencedGroup | null> {
  const group = await referencedGroup(tx, userId, groupId);
  if (!group) errors.contactGroupId = ['No contact group with this id.'];
  return group ?? null;
}

interface Descriptions {
  agentName?: string | undefined;
  agentPhoneNumber?: string | undefined;
  contactGroupName?: string | undefined;
  contactGroupTotal?: bigint | undefined;
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
  if (given.agentName !== undefined && given.agentName.trim() !== agent.name) {
    errors.agentName = [`Does not match the agent's name ("${agent.name}").`];
  }
  if (given.agentPhoneNumber !== undefined) {
    const number = toE164(given.agentPhoneNumber, country);
    if (!number) errors.agentPhoneNumber = [INVALID_PHONE_MESSAGE];
    else if (!agent.phoneNumbers.some((phone) => phone.number === number)) {
      errors.agentPhoneNumber = ["Is not one of the agent's phone numbers."];
    }
  }
  if (given.contactGroupName !== undefined && given.contactGroupName.trim() !== group.name) {
    errors.contactGroupName = [`Does not match the contact group's name ("${group.name}").`];
  }
  if (given.contactGroupTotal !== undefined && given.contactGroupTotal !== BigInt(group.total)) {
    errors.contactGroupTotal = [`Does not match the contact group's total (${group.total}).`];
  }
}
