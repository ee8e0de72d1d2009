import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { listen, notify } from '../db/notifications.js';
import type { SqlSession } from '../db/sql.js';
import type { DialerControl } from '../services/dialer/control.js';

// Wake-ups between dialer processes, at once. The job queue carries them durably, but a worker polls it
// only twice a second; a PostgreSQL NOTIFY reaches every listening worker within milliseconds, so the
// workers that share a busy campaign all claim its slots as calls end, instead of the one that
// applied the results taking them all. A lost notification costs nothing: the queue and the sweeps
// still bring every campaign round.

/** Its payload: the sender's id, a space, the campaign's id. */
export const WAKE_CHANNEL = 'callflow_dialer_wake';

export interface WakeNotifications {
  /** Tells the other processes that the campaign has work now. */
  send(campaignId: string): void;
  close(): Promise<void>;
}

export async function wakeNotifications(
  connectionString: string,
  sql: SqlSession,
  onWake: (campaignId: string) => void,
  log: Logger,
): Promise<WakeNotifications> {
  // This process's notifications come back to it too; its own wake-ups are already handled.
  const self = randomUUID();
  const listener = await listen(
    connectionString,
    WAKE_CHANNEL,
    (payload) => {
      const [sender, campaignId] = payload.split(' ');
      if (sender !== self && campaignId) onWake(campaignId);
    },
    log,
  );
  return {
    send(campaignId) {
      notify(sql, WAKE_CHANNEL, `${self} ${campaignId}`).catch((error: unknown) => {
        log.warn({ err: error, campaignId }, 'could not notify the other dialers');
      });
    },
    close: () => listener.close(),
  };
}

/**
 * The dialer control of a process on PostgreSQL that runs no dialer (an API instance with DIALER=off): a
 * campaign that starts or resumes wakes the workers at once, as a notification, instead of at their next
 * sweep (DIALER_SWEEP_SECONDS); if it is lost, that sweep still comes. A result a provider's webhook
 * stored here is applied by a worker's sweep.
 */
export function notifyingDialer(sql: SqlSession, log: Logger): DialerControl {
  const self = randomUUID();
  return {
    wake: async (campaignId) => {
      await notify(sql, WAKE_CHANNEL, `${self} ${campaignId}`).catch((error: unknown) => {
        log.warn({ err: error, campaignId }, 'could not notify the dialers');
      });
    },
    report: () => {},
  };
}
