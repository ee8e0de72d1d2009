import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';

type Tx = Prisma.TransactionClient | PrismaClient;

/**
 * Recounts the contacts of the groups inside the caller's transaction, so totals never drift. Erased
 * contacts are not counted: for the user they are gone.
 */
export async function refreshTotals(db: Tx, groupIds: string[]): Promise<void> {
  for (const id of new Set(groupIds)) {
    await db.$executeRaw`
      UPDATE contact_groups SET updated_at = now(),
        total = (SELECT count(*) FROM contacts WHERE contact_group_id = ${id}::uuid AND erased_at IS NULL)
      WHERE id = ${id}::uuid`;
  }
}
