import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { openTestDatabase } from './support/database.js';
import { startProxy } from './support/tcp-proxy.js';

// /healthz says the process is up; /readyz says it can serve: the database answers, every shipped
// migration is applied, and whatever else registered a check (the dialer's job engine) is running.

describe('/readyz', () => {
  let app: TestApp;
  let engineRunning = true;
  let engineHangs = false;

  beforeAll(async () => {
    app = await startTestApp();
    app.readiness.register('jobEngine', () => {
      if (engineHangs) return new Promise(() => {});
      if (!engineRunning) throw new Error('the job engine is not running');
    });
  });
  afterAll(() => app.close());

  it('answers 200 with every check listed, without a token', async () => {
    const res = await app.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      status: 'ready',
      checks: {
        database: { status: 'ok', durationMs: expect.any(Number) },
        migrations: { status: 'ok', durationMs: expect.any(Number) },
        jobEngine: { status: 'ok', durationMs: expect.any(Number) },
      },
    });
    expect((await app.request('GET', '/healthz')).json).toEqual({ status: 'ok' });
  });

  it('answers 503 while a registered check fails, and 200 again once it passes', async () => {
    engineRunning = false;
    const res = await app.request('GET', '/readyz');
    expect(res.status).toBe(503);
    expect(res.json.status).toBe('not ready');
    expect(res.json.checks.jobEngine).toEqual({
      status: 'failing',
      durationMs: expect.any(Number),
      error: 'the job engine is not running',
    });
    expect(res.json.checks.database.status).toBe('ok');
    engineRunning = true;
    expect((await app.request('GET', '/readyz')).status).toBe(200);
  });

  it('does not hang on a check that never answers', async () => {
    engineHangs = true;
    try {
      const res = await app.request('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.json.checks.jobEngine.error).toBe('no answer within 500 ms');
    } finally {
      engineHangs = false;
    }
  });

  it('answers 503 while a shipped migration is not applied', async () => {
    const [latest] = await app.prisma.$queryRaw<{ migration_name: string }[]>`
      SELECT migration_name FROM _prisma_migrations ORDER BY migration_name DESC LIMIT 1`;
    const name = latest!.migration_name;
    await app.prisma.$executeRaw`UPDATE _prisma_migrations SET rolled_back_at = now() WHERE migration_name = ${name}`;
    try {
      const res = await app.request('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.json.checks.migrations).toMatchObject({ status: 'failing', error: `not applied: ${name}` });
    } finally {
      await app.prisma.$executeRaw`UPDATE _prisma_migrations SET rolled_back_at = NULL WHERE migration_name = ${name}`;
    }
    expect((await app.request('GET', '/readyz')).status).toBe(200);
  });
});

describe.skipIf(Boolean(process.env.TEST_DATABASE_URL))('/readyz on a closed embedded database', () => {
  it('answers 503 once the PGlite instance is closed', async () => {
    const db = await openTestDatabase();
    let closed: Promise<void> | undefined;
    // Closed by the test first, then again by app.close().
    const app = await startTestApp({ database: { ...db, close: () => (closed ??= db.close()) } });
    try {
      expect((await app.request('GET', '/readyz')).status).toBe(200);
      await app.db.close();
      const res = await app.request('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.json.checks.database).toMatchObject({ status: 'failing', error: 'the database does not answer' });
      expect(res.json.checks.migrations).toMatchObject({ status: 'failing', error: 'the applied migrations cannot be read' });
    } finally {
      await app.close();
    }
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('/readyz when PostgreSQL goes away', () => {
  it('answers 503 while the server is unreachable and 200 again once it is back', async () => {
    const server = new URL(process.env.TEST_DATABASE_URL!);
    const target = { host: server.hostname, port: Number(server.port || 5432) };
    let proxy = await startProxy(target);
    const app = await startTestApp({ database: await openTestDatabase({ through: `127.0.0.1:${proxy.port}` }) });
    try {
      expect((await app.request('GET', '/readyz')).status).toBe(200);

      await proxy.stop();
      const down = await app.request('GET', '/readyz');
      expect(down.status).toBe(503);
      expect(down.json.checks.database).toMatchObject({ status: 'failing', error: 'the database does not answer' });
      expect((await app.request('GET', '/healthz')).status).toBe(200);

      proxy = await startProxy(target, proxy.port);
      await vi.waitFor(async () => expect((await app.request('GET', '/readyz')).status).toBe(200), { timeout: 10_000, interval: 200 });
    } finally {
      await app.close();
      await proxy.stop();
    }
  });
});
