import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { jobLogger } from '../logger.js';
import { callsEnded, providerErrors } from '../ops/metrics.js';
import { inJobSpan } from '../ops/tracing.js';
import { CALL_OUTCOMES } from '../services/call-outcomes.js';
import type { ServiceEnv } from '../services/context.js';
import type { DialerControl } from '../services/dialer/control.js';
import { Dialer } from '../services/dialer/engine.js';
import type { DialerOptions, Wake } from '../services/dialer/options.js';
import { RetellTelephony, type RetellOptions } from '../services/voice/providers/retell/telephony.js';
import { CallRefused, type Telephony } from '../services/voice/providers/telephony.js';
import { SimulatedTelephony, type SimulatorOptions } from '../services/voice/providers/simulated/telephony.js';
import { TickTurns } from '../services/dialer/turns.js';
import { TwilioTelephony, type TwilioOptions } from '../services/voice/providers/twilio/telephony.js';
import { roleEngine } from './engine.js';
import { ensureQueue, queueBacklog, type JobBacklog } from './queues.js';
import { wakeNotifications, type WakeNotifications } from './wake-notifications.js';

// The dialer on pg-boss. A wake-up ("tick campaign X") is a durable job that any worker process may
// take; a worker that has work keeps ticking the campaign itself, and asks the queue to bring the other
// workers in. Delayed wake-ups (retries, calling windows) are jobs with a start time. Every worker also
// sweeps now and then, which recovers whatever a crashed worker left behind. A wake-up carries the id of
// the request that caused it (a dispatch), and the lines of its ticks carry that id too. On PostgreSQL,
// wake-ups also go to the other workers at once as notifications (wake-notifications.ts).

const WAKE = 'dialer-wake';
/** The dialer's queues, made at its start (or ahead, in the embedded template). */
export const DIALER_QUEUES = [WAKE];
const CAMPAIGN_ID = 'callflow.campaign.id';
const CALLS_PLACED = 'callflow.dialer.calls_placed';

interface WakeJob {
  campaignId: string;
  requestId?: string;
}

/**
 * The telephony adapter: the simulator, Retell (whose results arrive on /webhooks/retell) or Twilio
 * (whose results arrive on /webhooks/twilio/status).
 */
export type TelephonyOptions =
  ({ provider: 'simulated' } & SimulatorOptions) | ({ provider: 'retell' } & RetellOptions) | ({ provider: 'twilio' } & TwilioOptions);

export interface DialerRuntimeOptions {
  telephony: TelephonyOptions;
  dialer: DialerOptions;
  /** Seconds between sweeps (lease expiry, scheduled starts, running campaigns). */
  sweepSeconds: number;
}

export interface DialerRuntime {
  control: DialerControl;
  dialer: Dialer;
  /** False once stopped, for the readiness check. */
  running(): boolean;
  backlog: JobBacklog;
  /**
   * Stops taking work, lets the ticks under way finish, applies the results of calls that ended (the
   * simulator ends its calls now), and puts wake-ups for the campaigns it touched on the queue, so
   * another worker goes on with them at once.
   */
  stop(): Promise<void>;
}

/** Runs the dialer in this process, on the process's job engine (`shared`) or on one of its own. */
export async function startDialer(env: ServiceEnv, db: Database, options: DialerRuntimeOptions, shared?: PgBoss): Promise<DialerRuntime> {
  const engine = await roleEngine(env.log, db, shared);
  const { boss } = engine;
  for (const name of DIALER_QUEUES) await ensureQueue(boss, name);

  let stopped = false;
  const isStopped = () => stopped;
  const queue = wakeQueue(boss, env, isStopped);
  const ticks = campaignTicks(env, () => dialer, options.dialer.ticksAtOnce, isStopped);
  // Campaigns woken while stopping, which another worker goes on with.
  const handOver = new Set<string>();
  // The embedded database has one process, whose wake-ups are its own.
  const others = db.listenUrl ? await wakeNotifications(db.listenUrl, env.sql, (campaignId) => ticks.run(campaignId), env.log) : null;

  for (const outcome of CALL_OUTCOMES) callsEnded.labels(outcome).inc(0);
  const dialer: Dialer = new Dialer(
    env,
    () => telephony,
    routeWakes(env, ticks, queue, others, isStopped, handOver),
    options.dialer,
    (outcome) => callsEnded.inc({ outcome }),
  );
  const telephony = countingErrors(
    options.telephony.provider,
    options.telephony.provider === 'retell'
      ? new RetellTelephony(options.telephony)
      : options.telephony.provider === 'twilio'
        ? new TwilioTelephony(options.telephony)
        : new SimulatedTelephony(options.telephony, (result) => dialer.report(result)),
  );

  await boss.work<WakeJob>(WAKE, { batchSize: 20, pollingIntervalSeconds: 0.5 }, async (jobs) => {
    const seen = new Set<string>();
    for (const job of jobs) {
      if (seen.has(job.data.campaignId)) continue;
      seen.add(job.data.campaignId);
      ticks.run(job.data.campaignId, jobLogger(env.log, { name: WAKE, id: job.id, requestId: job.data.requestId }));
    }
  });
  // The sweep under way, which stop() waits for: the database closes after it.
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweeper = setInterval(() => {
    sweeping = dialer.sweep().catch((error: unknown) => env.log.error({ err: error }, 'dialer sweep failed'));
  }, options.sweepSeconds * 1000);
  sweeper.unref();

  return {
    dialer,
    running: () => !stopped,
    backlog: queueBacklog(boss, [WAKE]),
    control: {
      wake: async (campaignId, cause) => {
        const jobId = await queue.send(campaignId, undefined, cause?.requestId);
        ticks.run(campaignId, jobLogger(env.log, { name: WAKE, id: jobId ?? 'coalesced', requestId: cause?.requestId }));
      },
      report: (result) => dialer.report(result),
    },
    async stop() {
      stopped = true;
      clearInterval(sweeper);
      await sweeping;
      const ticking = ticks.campaigns();
      await boss.offWork(WAKE);
      await ticks.stop();
      telephony.stop();
      // Results delivered on the next turn of the event loop (instant calls) are reported by then.
      await new Promise((resolve) => setImmediate(resolve));
      // Applying the results wakes their campaigns, which, with no ticks here any more, hands them over.
      await dialer.settled();
      for (const campaignId of new Set([...ticking, ...handOver])) void queue.send(campaignId);
      await queue.sent();
      await others?.close();
      await engine.release(10_000);
    },
  };
}

/**
 * The adapter, with every call its provider would not start counted by reason; the provider's series
 * exist from the start, at 0, so that a rate over them is defined at once.
 */
function countingErrors(provider: TelephonyOptions['provider'], telephony: Telephony): Telephony {
  for (const reason of PROVIDER_ERROR_REASONS) providerErrors.labels(provider, reason).inc(0);
  return {
    placeCall: async (call) => {
      try {
        return await telephony.placeCall(call);
      } catch (error) {
        providerErrors.inc({ provider, reason: error instanceof CallRefused ? error.reason : 'error' });
        throw error;
      }
    },
    stop: () => telephony.stop(),
  };
}

const PROVIDER_ERROR_REASONS = ['retry_later', 'invalid_destination', 'error'] as const satisfies readonly (
  CallRefused['reason'] | 'error'
)[];

/**
 * Where the dialer's wake-ups go: a later one onto the queue; one for now to this process's ticks and,
 * unless it frees what only this process can use, onto the queue and to the other workers. Once the
 * process is stopping, one for now is kept for the hand-over, every one of them: a slot this process
 * freed for itself is one it will no longer fill.
 */
function routeWakes(
  env: ServiceEnv,
  ticks: ReturnType<typeof campaignTicks>,
  queue: ReturnType<typeof wakeQueue>,
  others: WakeNotifications | null,
  stopped: () => boolean,
  handOver: Set<string>,
): Wake {
  return (campaignId, at, hereOnly) => {
    if (at && at.getTime() > env.clock.now().getTime()) {
      void queue.send(campaignId, at);
      return;
    }
    if (stopped()) {
      handOver.add(campaignId);
      return;
    }
    ticks.run(campaignId);
    if (hereOnly) return;
    void queue.send(campaignId);
    others?.send(campaignId);
  };
}

/**
 * Ticks campaigns in this process, in turns by customer (turns.ts); repeated asks coalesce, and a
 * campaign with more to do asks again.
 */
function campaignTicks(env: ServiceEnv, dialer: () => Dialer, atOnce: number, stopped: () => boolean) {
  const turns = new TickTurns<Logger>({
    atOnce,
    customerOf: (campaignId) => dialer().customerOf(campaignId),
    tick: async (campaignId, cause) => {
      const log = cause ?? env.log;
      const placed = await inJobSpan('dialer.tick', { [CAMPAIGN_ID]: campaignId }, async (span) => {
        const placed = await dialer().tick(campaignId, log);
        span.setAttribute(CALLS_PLACED, placed);
        return placed;
      });
      log.debug({ campaignId, placed }, 'dialer tick');
    },
    onError: (error, campaignId) => env.log.error({ err: error, campaignId }, 'dialer tick failed'),
  });
  return {
    run: (campaignId: string, log?: Logger) => {
      if (!stopped()) turns.ask(campaignId, log);
    },
    campaigns: () => turns.campaigns(),
    /** Takes no more ticks; resolves once the ticks under way have finished. */
    stop: () => turns.stop(),
  };
}

/** Wake-ups on the job queue, for whichever worker takes them; `sent()` waits for those being written. */
function wakeQueue(boss: PgBoss, env: ServiceEnv, stopped: () => boolean) {
  const sending = new Set<Promise<unknown>>();
  const send = (campaignId: string, startAfter?: Date, requestId?: string): Promise<string | null> => {
    const sent = boss
      .send(
        WAKE,
        { campaignId, ...(requestId ? { requestId } : {}) },
        startAfter
          ? { startAfter, singletonKey: `${campaignId}@${startAfter.toISOString()}` }
          : // pg-boss drops a job whose key was used in the same second, even by a job already done; the
            // hand-over on stop must not be dropped, and a repeated wake-up costs one empty tick.
            stopped()
            ? {}
            : { singletonKey: campaignId, singletonSeconds: 1 },
      )
      .catch((error: unknown) => {
        env.log.error({ err: error, campaignId }, 'could not queue a dialer wake-up');
        return null;
      });
    sending.add(sent);
    void sent.finally(() => sending.delete(sent));
    return sent;
  };
  return { send, sent: () => Promise.all(sending) };
}
