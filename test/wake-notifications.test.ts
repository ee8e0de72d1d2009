import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { wakeNotifications, type WakeNotifications } from '../src/jobs/wake-notifications.js';
import { openTestDatabase } from './support/database.js';
import { waitFor } from './support/wait.js';
import { testSql } from './support/sql.js';

// Dialer wake-ups between processes: what one dialer sends, every other one hears at once, and none
// hears its own. Two instances on one database stand for two worker processes.

describe.runIf(inject('testDatabase').kind === 'postgres')('dialer wake-up notifications', () => {
  let db: Database;
  const opened: WakeNotifications[] = [];
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(opened.map((n) => n.close()));
    await db.close();
  });

  async function dialer(heard: string[]) {
    const [{ name }] = (await testSql(db.sql).query<{ name: string }>('SELECT current_database() AS name')) as [{ name: string }];
    const url = new URL((inject('testDatabase') as { serverUrl: string }).serverUrl);
    url.pathname = `/${name}`;
    const notifications = await wakeNotifications(
      url.toString(),
      db.sql,
      (campaignId) => heard.push(campaignId),
      pino({ level: 'silent' }),
    );
    opened.push(notifications);
    return notifications;
  }

  it('reach every other dialer, and not the one that sent them', async () => {
    const heardByA: string[] = [];
    const heardByB: string[] = [];
    const heardByC: string[] = [];
    const a = await dialer(heardByA);
    await dialer(heardByB);
    await dialer(heardByC);
    const campaignId = randomUUID();
    a.send(campaignId);
    await waitFor(async () => (heardByB.length && heardByC.length ? true : undefined), 5_000, 'the others to hear');
    expect(heardByB).toEqual([campaignId]);
    expect(heardByC).toEqual([campaignId]);
    // A's own notification has had the time to come back to it too, and was not taken as a wake-up.
    expect(heardByA).toEqual([]);
  });

  it('stop reaching a dialer once it is closed', async () => {
    const heardByA: string[] = [];
    const heardByB: string[] = [];
    const a = await dialer(heardByA);
    const b = await dialer(heardByB);
    await b.close();
    const heardByC: string[] = [];
    await dialer(heardByC);
    a.send('after-close');
    await waitFor(async () => (heardByC.length ? true : undefined), 5_000, 'the open dialer to hear');
    expect(heardByB).toEqual([]);
  });
});
