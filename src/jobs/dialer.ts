import PgBoss from 'pg-boss';
import type { Database } from '../db/database.js';
import type { ServiceEnv } from '../services/context.js';
import type { DialerControl } from '../services/dialer/control.js';
import { Dialer, type DialerOptions } from '../services/dialer/engine.js';
import { RetellTelephony, type RetellOptions } from '../services/dialer/retell.js';
import { SimulatedTelephony, type SimulatorOptions } from '../services/dialer/simulated.js';

// The dialer on pg-boss. A wake-up ("tick campaign X") is a durable job that any worker process may
// take; a worker that has work keeps ticking the campaign itself, and asks the queue to bring the other
// workers in. Delayed wake-ups (retries, calling windows) are jobs with a start time. Every worker also
// sweeps now and then, which recovers whatever a crashed worker left behind.

const WAKE = 'dialer-wake';

/** The telephony adapter: the simulator, or Retell (whose results arrive on /webhooks/retell). */
export type TelephonyOptions = ({ provider: 'simulated' } & SimulatorOptions) | ({ provider: 'retell' } & RetellOptions);

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
  /** Stops taking work; calls in flight are left to their leases, as after a crash. */
  stop(): Promise<void>;
}

export async function startDialer(env: ServiceEnv, db: Database, options: DialerRuntimeOptions): Promise<DialerRuntime> {
  const boss = new PgBoss({ ...db.jobEngineConnection, max: 4, schedule: false, supervise: true } as PgBoss.ConstructorOptions);
  boss.on('error', (error) => env.log.error({ err: error }, 'job engine error'));
  await boss.start();
  await boss.createQueue(WAKE);

  const running = new Map<string, boolean>();
  const loops = new Set<Promise<void>>();
  let stopped = false;
  /** Ticks a campaign in this process until it has nothing more to do now; repeated asks coalesce. */
  const tickHere = (campaignId: string) => {
    if (stopped) return;
    if (running.has(campaignId)) {
      running.set(campaignId, true);
      return;
    }
    running.set(campaignId, false);
    const loop = (async () => {
      try {
        do {
          running.set(campaignId, false);
          await dialer.tick(campaignId);
        } while (running.get(campaignId) && !stopped);
      } catch (error) {
        env.log.error({ err: error, campaignId }, 'dialer tick failed');
      } finally {
        running.delete(campaignId);
      }
    })();
    loops.add(loop);
    void loop.finally(() => loops.delete(loop));
  };
  const enqueue = (campaignId: string, startAfter?: Date) =>
    boss
      .send(WAKE, { campaignId }, startAfter ? { startAfter, singletonKey: `${campaignId}@${startAfter.toISOString()}` } : { singletonKey: campaignId, singletonSeconds: 1 })
      .catch((error: unknown) => env.log.error({ err: error, campaignId }, 'could not queue a dialer wake-up'));

  const dialer: Dialer = new Dialer(
    env,
    () => telephony,
    (campaignId, at) => {
      if (at && at.getTime() > env.clock.now().getTime()) {
        void enqueue(campaignId, at);
        return;
      }
      tickHere(campaignId);
      void enqueue(campaignId);
    },
    options.dialer,
  );
  const telephony =
    options.telephony.provider === 'retell'
      ? new RetellTelephony(options.telephony)
      : new SimulatedTelephony(options.telephony, (result) => dialer.report(result));

  await boss.work<{ campaignId: string }>(WAKE, { batchSize: 20, pollingIntervalSeconds: 0.5 }, async (jobs) => {
    for (const campaignId of new Set(jobs.map((job) => job.data.campaignId))) tickHere(campaignId);
  });
  const sweeper = setInterval(() => {
    dialer.sweep().catch((error: unknown) => env.log.error({ err: error }, 'dialer sweep failed'));
  }, options.sweepSeconds * 1000);
  sweeper.unref();

  return {
    dialer,
    running: () => !stopped,
    control: {
      wake: async (campaignId) => {
        tickHere(campaignId);
        await enqueue(campaignId);
      },
      report: (result) => dialer.report(result),
    },
    async stop() {
      stopped = true;
      clearInterval(sweeper);
      if (telephony instanceof SimulatedTelephony) telephony.stop();
      await Promise.all(loops);
      await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
      await dialer.settled();
    },
  };
}
