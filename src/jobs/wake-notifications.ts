import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import type { SqlSession } from '../db/sql.js';

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
  let client: pg.Client | undefined;
  let closed = false;
  let reconnect: NodeJS.Timeout | undefined;

  const connect = async () => {
    const listener = new pg.Client({ connectionString });
    listener.on('notification', ({ payload }) => {
      const [sender, campaignId] = (payload ?? '').split(' ');
      if (sender !== self && campaignId) onWake(campaignId);
    });
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost || closed) return;
      lost = true;
      log.warn({ err: error }, 'the dialer wake-up listener lost its connection; reconnecting');
      reconnect = setTimeout(() => void connect().catch(onFailedConnect), 1000);
      reconnect.unref();
    };
    listener.on('error', onLost);
    listener.on('end', () => onLost());
    await listener.connect();
    await listener.query(`LISTEN ${WAKE_CHANNEL}`);
    client = listener;
  };
  const onFailedConnect = (error: unknown) => {
    log.warn({ err: error }, 'the dialer wake-up listener could not connect; retrying');
    reconnect = setTimeout(() => void connect().catch(onFailedConnect), 1000);
    reconnect.unref();
  };
  await connect();

  return {
    send(campaignId) {
      sql.query('SELECT pg_notify($1, $2)', [WAKE_CHANNEL, `${self} ${campaignId}`]).catch((error: unknown) => {
        log.warn({ err: error, campaignId }, 'could not notify the other dialers');
      });
    },
    async close() {
      closed = true;
      clearTimeout(reconnect);
      await client?.end();
    },
  };
}
