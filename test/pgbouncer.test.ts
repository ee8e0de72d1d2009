import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { startTestApp, type TestApp } from './support/app.js';
import { contactRows, exemptFromRegionalRules, grant } from './support/campaigns.js';
import { databaseUrl } from './support/database.js';
import { campaignCompleted } from './support/dialer.js';
import { createAgent } from './support/fixtures.js';
import { ALWAYS_OPEN } from './support/live.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { waitFor } from './support/wait.js';
import { serverProcess, stopServer } from './support/workers.js';

// The service behind Debian's PgBouncer in transaction mode: DATABASE_URL through PgBouncer, and
// DATABASE_DIRECT_URL to the server for what needs a session of its own (migrations, LISTEN). A server
// process on a fresh database migrates, then answers GraphQL, dials a campaign to completion with the
// simulated provider on the job engine, and delivers its webhooks, with its sessions through PgBouncer.

const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'].find((path) => existsSync(path));
// CI installs it (.ci/run): there, a missing binary fails the file rather than skipping it.
const skip = !PGBOUNCER && !process.env.CI;
const title = skip
  ? 'behind PgBouncer in transaction mode (skipped: no pgbouncer binary; apt-get install pgbouncer)'
  : 'behind PgBouncer in transaction mode';

describe.runIf(inject('testDatabase').kind === 'postgres' && !skip)(title, () => {
  const serverUrl = (inject('testDatabase') as { serverUrl: string }).serverUrl;
  const name = `callflow_pgbouncer_${randomUUID().replace(/-/g, '')}`;
  // Set in beforeAll: a skipped describe's body still runs, on PGlite too, where there is no server URL.
  let direct: string;
  let bouncer: Awaited<ReturnType<typeof startPgBouncer>>;
  let pooled: string;
  let api: Awaited<ReturnType<typeof serverProcess>> | undefined;
  let app: TestApp | undefined;
  let receiver: Receiver | undefined;

  beforeAll(async () => {
    if (!PGBOUNCER) throw new Error('pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it)');
    direct = databaseUrl(serverUrl, name);
    await adminQuery(serverUrl, `CREATE DATABASE "${name}"`);
    bouncer = await startPgBouncer(PGBOUNCER, new URL(serverUrl));
    const through = new URL(direct);
    through.host = `127.0.0.1:${bouncer.port}`;
    pooled = through.toString();
    // An empty database: the server applies every migration over the direct URL at its start.
    api = await serverProcess(pooled, {
      DATABASE_DIRECT_URL: direct,
      SIM_SEED: 'pgbouncer',
      SIM_TIME_SCALE: '0',
      DIALER_SWEEP_SECONDS: '1',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    });
    // The tests' own client, for fixtures and checks, on the direct URL.
    app = await startTestApp({ database: await openDatabase({ kind: 'postgres', url: direct }) });
  }, 400_000);

  afterAll(async () => {
    await receiver?.close();
    if (api) await stopServer(api.child);
    await app?.close();
    await bouncer?.stop();
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });

  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${api!.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  const gql = (token: string, query: string, variables: Record<string, unknown> = {}) =>
    call('POST', '/graphql', token, { query, variables }).then((res) => res.json as { data?: any; errors?: unknown[] });

  it('migrates over the direct URL and is ready', async () => {
    const ready = await fetch(`${api!.url}/readyz`);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: { status: 'ok' }, migrations: { status: 'ok' } } });
  });

  it('answers a GraphQL read and a mutation, dials a campaign to completion and delivers its webhooks', async () => {
    const userId = randomUUID();
    const token = await app!.token(userId);
    const agent = await createAgent(app!, token);
    await grant(app!, userId, 1_000);
    await exemptFromRegionalRules(app!, userId);
    receiver = await startReceiver();

    const read = await gql(token, '{ agentTemplates { id } }');
    expect(read.errors).toBeUndefined();
    expect(read.data.agentTemplates.length).toBeGreaterThan(0);
    const made = await gql(token, 'mutation($url: String!) { createWebhookEndpoint(input: { url: $url }) { endpoint { id } } }', {
      url: receiver.url,
    });
    expect(made.errors).toBeUndefined();
    const endpointId = made.data.createWebhookEndpoint.endpoint.id as string;

    const imported = await call('POST', '/api/v1/contacts/import/', token, { groupName: 'Through PgBouncer', csvData: contactRows(5) });
    expect(imported.status).toBe(201);
    const created = await call('POST', '/api/v1/contacts/contacts/', token, {
      name: 'Through PgBouncer',
      agent_id: agent.id,
      contact_group_id: imported.json.groupId,
      ...ALWAYS_OPEN,
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect((await call('POST', `/api/v1/campaigns/${id}/dispatch/`, token, { triggered_by: 'tests' })).status).toBe(202);

    await campaignCompleted(app!, id, 180_000);
    const attempts = await app!.prisma.callAttempt.findMany({ where: { campaignId: id } });
    expect(attempts).toHaveLength(5);
    expect(attempts.every((a) => a.endedAt !== null && a.outcome !== null)).toBe(true);
    // The job engine delivered every event of the campaign.
    const delivered = await waitFor(
      async () => {
        const messages = await app!.prisma.webhookMessage.findMany({ where: { endpointId } });
        return messages.length > 0 && messages.every((m) => m.state === 'succeeded') ? messages.length : undefined;
      },
      180_000,
      'every webhook delivery',
    );
    expect(receiver.received).toHaveLength(delivered);

    // And the server's statements went through PgBouncer: it counted their transactions.
    const stats = await adminQuery(`postgresql://postgres@127.0.0.1:${bouncer.port}/pgbouncer`, 'SHOW STATS');
    const ours = stats.find((row) => row.database === name);
    expect(Number(ours?.total_xact_count)).toBeGreaterThan(100);
  }, 500_000);
});

async function adminQuery(url: string, text: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** PgBouncer in transaction mode on a free port, in front of `upstream`, with a configuration of its own in a temporary folder. */
async function startPgBouncer(binary: string, upstream: URL) {
  const dir = await mkdtemp(join(tmpdir(), 'pgbouncer-'));
  // Run as root it drops to the postgres user, who must read its files.
  await chmod(dir, 0o755);
  const port = await freePort();
  const user = decodeURIComponent(upstream.username) || 'postgres';
  const config = join(dir, 'pgbouncer.ini');
  await writeFile(join(dir, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 });
  await writeFile(
    config,
    [
      '[databases]',
      `* = host=${upstream.hostname} port=${upstream.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      'default_pool_size = 20',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(binary, [...(asRoot ? ['-u', 'postgres'] : []), config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening on 127\.0\.0\.1:\d+/.test(output)) resolve();
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`pgbouncer exited with ${code}:\n${output}`)));
  });
  return {
    port,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
