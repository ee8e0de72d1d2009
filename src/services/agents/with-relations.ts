import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import * as store from './store.js';
import type { AgentStatusFilter } from './store.js';

// Agents with their template, numbers and campaigns: what v1 lists. The store reads them in one plain
// SQL statement; the shape is Prisma's own for `agentRelations`, and a test holds the SQL read and
// Prisma's include to the same result.

export const agentRelations = {
  template: true,
  phoneNumbers: {
    select: { id: true, number: true, label: true, isPrimary: true },
    orderBy: [{ isPrimary: 'desc' as const }, { createdAt: 'asc' as const }, { id: 'asc' as const }],
  },
  campaigns: { select: { id: true, name: true, status: true }, orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }] },
} satisfies Prisma.AgentInclude;

export type AgentWithRelations = Prisma.AgentGetPayload<{ include: typeof agentRelations }>;

/** The caller's agents, newest first, of one status or all. */
export function listAgentsWithRelations(ctx: ServiceContext, status: AgentStatusFilter | null | undefined): Promise<AgentWithRelations[]> {
  return store.listAgentsWithRelations(ctx.sql, ctx.user.id, status);
}
