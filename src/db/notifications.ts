import pg from 'pg';
import type { Logger } from 'pino';
import { statement, type SqlSession } from './sql.js';

// PostgreSQL's LISTEN/NOTIFY, for messages between processes that may be lost without harm.

const notifyStatement = statement('db.notify', 'SELECT pg_notify($1, $2)');

/** Sends `payload` to every session listening on `channel`. */
export async function notify(sql: SqlSession, channel: string, payload: string): Promise<void> {
  await sql.run(notifyStatement, [channel, payload]);
}

export interface Listener {
  close(): Promise<void>;
}

/**
 * Listens on `channel` on a connection of its own, reconnecting a second after it is lost (notifications
 * sent meanwhile are lost). Resolves once the first connection listens.
 */
export async function listen(
  connectionString: string,
  channel: string,
  onPayload: (payload: string) => void,
  log: Logger,
): Promise<Listener> {
  let client: pg.Client | undefined;
  let closed = false;
  let reconnect: NodeJS.Timeout | undefined;

  const retry = () => {
    reconnect = setTimeout(() => void connect().catch(onFailedConnect), 1000);
    reconnect.unref();
  };
  const connect = async () => {
    const listener = new pg.Client({ connectionString });
    listener.on('notification', ({ payload }) => onPayload(payload ?? ''));
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost || closed) return;
      lost = true;
      log.warn({ err: error, channel }, 'a listener lost its connection; reconnecting');
      retry();
    };
    listener.on('error', onLost);
    listener.on('end', () => onLost());
    await listener.connect();
    await listener.query(`LISTEN ${channel}`);
    client = listener;
  };
  const onFailedConnect = (error: unknown) => {
    log.warn({ err: error, channel }, 'a listener could not connect; retrying');
    retry();
  };
  await connect();

  return {
    async close() {
      closed = true;
      clearTimeout(reconnect);
      await client?.end();
    },
  };
}
