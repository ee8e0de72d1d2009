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

/** Jobs waiting in each of a process's queues (created or retrying, those scheduled for later included), by queue. */
export type JobBacklog = () => Promise<Record<string, number>>;

/** The backlog of some queues of one job engine. */
export function queueBacklog(boss: PgBoss, names: string[]): JobBacklog {
  return async () =>
    Object.fromEntries(await Promise.all(names.map(async (name) => [name, (await boss.getQueueSize(name)) ?? 0] as const)));
}

/** The backlogs of several roles of the job engine, as one. */
export function combinedBacklog(backlogs: JobBacklog[]): JobBacklog {
  return async () => Object.assign({}, ...(await Promise.all(backlogs.map((backlog) => backlog()))));
}
