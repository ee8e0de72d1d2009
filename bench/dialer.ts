import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { openDatabase, type Database } from '../src/db/database.js';
import { seedAgentTemplates } from '../src/db/seed.js';
import { WAKE_CHANNEL } from '../src/jobs/wake-notifications.js';
import { createAgent } from '../src/services/agents/agents.js';
import { grantCredits } from '../src/services/billing/grants.js';
import { importContacts } from '../src/services/contacts/import.js';
import { serviceContext, systemClock, type ServiceEnv } from '../src/services/context.js';
import { idleVoice } from '../src/services/voice/control.js';
import { idleDialer } from '../src/services/dialer/control.js';
import { enrollContacts } from '../src/services/campaigns/store.js';
import { inProcessEventBus } from '../src/services/events.js';
import { defaultSettings } from '../src/services/settings.js';
import {
  BENCH_SECRET,
  buildOnce,
  cpuMsOf,
  machineCpuMs,
  median,
  postgresCpuBetween,
  postgresCpuMs,
  profileArgs,
  round,
  withDatabase,
} from './support.js';
import { notify } from '../src/db/notifications.js';

// Issue 5: a 10,000-contact campaign at concurrent_calls 100 on the instant simulator, on PostgreSQL:
// attempts per second with one worker process and with two. Targets: at least 1,000 attempts/s per
// worker, and two workers at least 1.7 times one. For reference, two workers that share nothing but the
// machine and its PostgreSQL server: a campaign each, on a database each.

const CONTACTS = Number(process.env.BENCH_DIALER_CONTACTS ?? 10_000);
const RUNS = Number(process.env.BENCH_DIALER_RUNS ?? 3);
const root = new URL('..', import.meta.url).pathname;

async function campaignFor(db: Database, env: ServiceEnv): Promise<string> {
  const userId = randomUUID();
  await db.prisma.user.create({ data: { id: userId } });
  const ctx = serviceContext(env, { id: userId, isAdmin: false });
  const template = await db.prisma.agentTemplate.findUniqueOrThrow({ where: { templateKey: 'appointment_setter' } });
  const agent = await createAgent(ctx, {
    template_id: template.id,
    name: 'Bench agent',
    phone_number: '+14155550100',
    variables: { agent_name: 'Sam', company_name: 'Acme' },
  });
  const rows = Array.from({ length: CONTACTS }, (_, i) => ({ Name: `Person ${i}`, Phone: `+1415${2_000_000 + i}` }));
  const { groupId } = await importContacts(ctx, { group_name: 'Bench', csv_data: rows });
  await grantCredits(serviceContext(env, { id: randomUUID(), isAdmin: true }), {
    user_id: userId,
    kind: 'top_up',
    amount_cents: 1_000_000_000,
  });
  // Turning the regional rules off needs an administrator's exemption in force.
  await db.prisma.regionalRuleExemption.create({
    data: { userId, grantedBy: 'bench', reason: 'Bench: simulated calls at any hour', expiresAt: new Date(Date.now() + 86_400_000) },
  });
  const campaign = await db.prisma.campaign.create({
    data: {
      userId,
      agentId: agent.id,
      contactGroupId: groupId,
      name: 'Bench campaign',
      // Paused until the workers are up, so that the figure is what they dial together, not how fast
      // each one starts.
      status: 'paused',
      startedAt: new Date(),
      concurrentCalls: 100,
      callingHours: { start: '00:00', end: '24:00' },
      activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
      // Any hour of the day is a bench hour: the gate still reads each callee's place, but no regional
      // rule holds a call back.
      regionalRules: false,
      // One attempt per contact, so a run is exactly CONTACTS attempts.
      scheduleConfig: { max_attempts: 1, max_attempts_per_day: 1, retry_interval_minutes: 60, retry_on: [] },
    },
  });
  await enrollContacts(db.sql, campaign.id, new Date());
  return campaign.id;
}

/** `npm run worker:prod`'s script, run without npm so that the process measured is the worker's own. */
const workerArgs = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')).scripts['worker:prod'] as string).split(' ').slice(1);

/** A worker as production runs it, on the database; resolves once it has started (its log says so). */
async function startWorker(url: string): Promise<ChildProcess> {
  await buildOnce();
  const child = spawn(process.execPath, [...profileArgs, ...workerArgs], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      JWT_SECRET: BENCH_SECRET,
      DATABASE_URL: url,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      SIM_TIME_SCALE: '0',
      DIALER_SWEEP_SECONDS: '1',
      // Two workers share this host: each serves its operations endpoints on a free port.
      WORKER_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        if (line.includes('"msg":"dialer worker started"')) resolve(child);
        // Only warnings and errors reach the bench's output.
        else if (/"level":([4-9]\d)/.test(line) || process.env.BENCH_LOG_LEVEL) console.log(line);
      }
    });
    child.once('exit', (code) => reject(new Error(`a worker exited with ${code} before it started`)));
  });
}

interface Run {
  attemptsPerSec: number;
  /** CPU used over the run, in cores (2 is all of this machine): by the workers, PostgreSQL, everything. */
  workerCores: number;
  postgresCores: number;
  machineCores: number;
}

/** A database to dial on, migrated and seeded. */
interface Target {
  db: Database;
  env: ServiceEnv;
  url: string;
}

/**
 * Dials a fresh campaign on each target at once, with `workers` worker processes on each target's
 * database: the attempts of all of them over the time from the first call to the last result.
 */
async function run(targets: Target[], workers: number): Promise<Run> {
  const campaignIds: string[] = [];
  for (const { db, env } of targets) campaignIds.push(await campaignFor(db, env));
  const children = await Promise.all(targets.flatMap(({ url }) => Array.from({ length: workers }, () => startWorker(url))));
  const postgresBefore = await postgresCpuMs();
  const machineBefore = await machineCpuMs();
  const workersBefore = await Promise.all(children.map((child) => cpuMsOf(child.pid!)));
  const started = performance.now();
  // Woken by the notification workers send each other, so that every campaign starts at once: their
  // sweeps would find each one within a second, but not at the same moment.
  await Promise.all(
    targets.map(async ({ db }, i) => {
      await db.prisma.campaign.update({ where: { id: campaignIds[i] }, data: { status: 'running' } });
      await notify(db.sql, WAKE_CHANNEL, `bench ${campaignIds[i]}`);
    }),
  );
  let workerMs = 0;
  let postgresMs: number;
  let machineMs: number;
  let elapsedMs: number;
  try {
    for (const [i, { db }] of targets.entries()) {
      for (;;) {
        const { status } = await db.prisma.campaign.findUniqueOrThrow({ where: { id: campaignIds[i] }, select: { status: true } });
        if (status !== 'running') break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    // Read before the workers exit.
    elapsedMs = performance.now() - started;
    for (const [i, child] of children.entries()) workerMs += (await cpuMsOf(child.pid!)) - workersBefore[i]!;
    postgresMs = postgresCpuBetween(postgresBefore, await postgresCpuMs());
    machineMs = (await machineCpuMs()) - machineBefore;
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => new Promise((resolve) => child.once('exit', resolve))));
  }
  let attempts = 0;
  let first = Infinity;
  let last = -Infinity;
  for (const [i, { db }] of targets.entries()) {
    const [span] = await db.prisma.$queryRaw<{ attempts: number; first: Date; last: Date }[]>`
      SELECT count(*)::int AS attempts, min(created_at) AS first, max(ended_at) AS last FROM call_attempts WHERE campaign_id = ${campaignIds[i]}::uuid`;
    if (span!.attempts !== CONTACTS) throw new Error(`expected ${CONTACTS} attempts, got ${span!.attempts}`);
    attempts += span!.attempts;
    first = Math.min(first, span!.first.getTime());
    last = Math.max(last, span!.last.getTime());
  }
  return {
    attemptsPerSec: attempts / ((last - first) / 1000),
    workerCores: workerMs / elapsedMs,
    postgresCores: postgresMs / elapsedMs,
    machineCores: machineMs / elapsedMs,
  };
}

async function target(url: string): Promise<Target> {
  const db = await openDatabase({ kind: 'postgres', url });
  await db.migrate();
  await seedAgentTemplates(db);
  const log = pino({ level: 'warn' });
  return {
    db,
    url,
    env: {
      db: db.prisma,
      sql: db.sql,
      clock: systemClock,
      log,
      settings: defaultSettings,
      dialer: idleDialer,
      voice: idleVoice,
      events: inProcessEventBus(log),
    },
  };
}

export async function benchDialer() {
  return withDatabase((url) =>
    withDatabase(async (otherUrl) => {
      const targets = [await target(url), await target(otherUrl)];
      try {
        const one: Run[] = [];
        const two: Run[] = [];
        // What two workers do when they share nothing but the machine: one campaign each, on a database
        // each. Their speedup over one worker is as far as sharing a campaign could bring two workers here.
        const apart: Run[] = [];
        for (let i = 0; i < RUNS; i += 1) {
          one.push(await run(targets.slice(0, 1), 1));
          two.push(await run(targets.slice(0, 1), 2));
          apart.push(await run(targets, 1));
        }
        const rate = (runs: Run[]) => median(runs.map((r) => r.attemptsPerSec));
        const all = (runs: Run[]) => runs.map((r) => round(r.attemptsPerSec, 0)).join(' ');
        const cores = (runs: Run[]) =>
          `workers ${round(median(runs.map((r) => r.workerCores)), 2)}, postgres ${round(median(runs.map((r) => r.postgresCores)), 2)}, machine ${round(median(runs.map((r) => r.machineCores)), 2)}`;
        return {
          name: 'dialer (instant simulator, PostgreSQL)',
          contacts: CONTACTS,
          concurrentCalls: 100,
          runs: RUNS,
          oneWorkerAttemptsPerSec: round(rate(one), 0),
          twoWorkersAttemptsPerSec: round(rate(two), 0),
          speedup: round(rate(two) / rate(one), 2),
          twoApartAttemptsPerSec: round(rate(apart), 0),
          apartSpeedup: round(rate(apart) / rate(one), 2),
          allOne: all(one),
          allTwo: all(two),
          allApart: all(apart),
          oneWorkerCpuCores: cores(one),
          twoWorkersCpuCores: cores(two),
          twoApartCpuCores: cores(apart),
          targets: { perWorker: 1000, speedup: 1.7 },
        };
      } finally {
        for (const { db } of targets) await db.close();
      }
    }),
  );
}
