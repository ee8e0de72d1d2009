import type { IsoInstants } from '../../db/json-rows.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import * as store from './store.js';
import type { AgentStatusFilter } from './store.js';

// Agents with their template, numbers and campaigns: what v1 lists. The store reads them in one plain
// SQL statement that builds each row as one JSON object; the shape is Prisma's own for `agentRelations`
// less `agentHidden`, with instants as ISO 8601 text, and a test holds the SQL read and Prisma's to the
// same result.

export const agentRelations = {
  template: true,
  phoneNumbers: {
    select: { id: true, number: true, label: true, isPrimary: true },
    orderBy: [{ isPrimary: 'desc' as const }, { createdAt: 'asc' as const }, { id: 'asc' as const }],
  },
  campaigns: { select: { id: true, name: true, status: true }, orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }] },
} satisfies Prisma.AgentInclude;

/** What v1 never shows of an agent, left unread: the prompt filled in from its template, its version and provisioning. */
export const agentHidden = {
  systemPrompt: true,
  providerAgentId: true,
  version: true,
  provisioningState: true,
  provisioningError: true,
  provisioningUpdatedAt: true,
  provisioningQueuedVersion: true,
  providerLlmId: true,
  providerVersion: true,
  provisionedVersion: true,
  providerModifiedAt: true,
  providerDrift: true,
  providerDriftAt: true,
} satisfies Prisma.AgentOmit;

export type AgentWithRelations = IsoInstants<Prisma.AgentGetPayload<{ include: typeof agentRelations; omit: typeof agentHidden }>>;

/** The caller's agents, newest first, of one status or all. */
export function listAgentsWithRelations(ctx: ServiceContext, status: AgentStatusFilter | null | undefined): Promise<AgentWithRelations[]> {
  return store.listAgentsWithRelations(ctx.sql, ctx.user.id, status);
}
