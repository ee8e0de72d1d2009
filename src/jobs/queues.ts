import type PgBoss from 'pg-boss';
import { retryOnConflict } from '../services/dialer/retry.js';

/**
 * Creates a pg-boss queue unless it exists. pg-boss's own create_queue inserts the queue's row and then
 * alters its job table in one transaction, so two processes starting together on a fresh database can
 * deadlock there (PostgreSQL picks one as the victim). The victim did nothing; it tries again and finds
 * the queue the other one made.
 */
export async function ensureQueue(boss: PgBoss, name: string, options?: Omit<PgBoss.Queue, 'name'>): Promise<void> {
  await retryOnConflict(async () => {
    if (await boss.getQueue(name)) return;
    await boss.createQueue(name, { name, ...options });
  }, 6);
}
