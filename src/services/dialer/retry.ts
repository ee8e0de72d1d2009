import { setTimeout as sleep } from 'node:timers/promises';

// Several workers lock the same rows (a campaign, a credit account), so PostgreSQL will now and then
// pick one transaction as a deadlock victim or time out a lock wait. Such a transaction did nothing;
// running it again is the documented remedy.

const RETRYABLE = /40P01|40001|deadlock detected|could not serialize|P2034|P2028|expired transaction/;

export async function retryOnConflict<T>(work: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      const text = `${(error as { code?: string }).code ?? ''} ${(error as Error).message ?? ''}`;
      if (attempt >= attempts || !RETRYABLE.test(text)) throw error;
      await sleep(10 * attempt + Math.random() * 20);
    }
  }
}
