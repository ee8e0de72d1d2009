import { setTimeout as sleep } from 'node:timers/promises';
import type { SqlSession } from '../../../db/sql.js';
import { brainCall, type BrainCall } from './store.js';

// The dialer stores a call's provider id once the provider's create-call answers for the whole batch it
// placed, and Retell may open the call's socket before that: an id we do not know yet is looked for
// again for a few seconds before it is refused.

/** How long a socket waits for its call to be known. */
const CALL_WAIT_MS = 5_000;
const POLL_MS = 200;

export async function callForSocket(sql: SqlSession, providerCallId: string): Promise<BrainCall | undefined> {
  const until = Date.now() + CALL_WAIT_MS;
  for (;;) {
    const call = await brainCall(sql, providerCallId);
    if (call || Date.now() >= until) return call;
    await sleep(POLL_MS);
  }
}
