import type PgBoss from 'pg-boss';
import type { Database } from '../db/database.js';
import { jobLogger } from '../logger.js';
import type { ServiceEnv } from '../services/context.js';
import type { VoiceControl } from '../services/voice/control.js';
import type { VoiceProvider } from '../services/voice/provider.js';
import { RetellVoiceProvider, type RetellProvisioningOptions } from '../services/voice/providers/retell/agents.js';
import { SimulatedVoiceProvider } from '../services/voice/providers/simulated/agents.js';
import { provisionAgent, queueProvisioning, sweepDrift } from '../services/voice/provisioning.js';
import { queueSession } from '../services/webhooks/queueing.js';
import { roleEngine } from './engine.js';
import { ensureQueue, queueBacklog, type JobBacklog } from './queues.js';

// Agents' provisioning on pg-boss. A change leaves the agent pending (the outbox); a relay moves each
// new version onto the queue, in the transaction that marks it queued. A job that meets a passing error
// (429, 5xx, a timeout) fails and pg-boss runs it again with exponential backoff; its last try, or a
// refusal, marks the agent failed with the provider's message. The drift sweep is a job too, one per
// period whichever process queues it.

const PROVISION = 'agent-provision';
const DRIFT = 'agent-drift-sweep';
/** Provisioning's queues, made at its start (or ahead, in the embedded template). */
export const PROVISIONING_QUEUES = [PROVISION, DRIFT];

interface ProvisionJob {
  agentId: string;
  version: number;
}

/** Where agents live besides here: the simulator (nothing to reach) or Retell. */
export type VoiceProviderOptions = { provider: 'simulated' } | ({ provider: 'retell' } & RetellProvisioningOptions);

export interface ProvisioningRuntimeOptions {
  voice: VoiceProviderOptions;
  /** How often pending agents are moved onto the queue. */
  relayMs: number;
  /** Tries after the first for a passing error, `retryDelaySeconds` apart and doubling. */
  retryLimit: number;
  retryDelaySeconds: number;
  /** Beyond this, a running job counts as lost (its worker died) and is run again. */
  jobExpireSeconds: number;
  /** How often agents are compared with what the provider holds. */
  driftSweepSeconds: number;
}

export interface ProvisioningRuntime {
  control: VoiceControl;
  provider: VoiceProvider;
  backlog: JobBacklog;
  stop(): Promise<void>;
}

export function voiceProvider(options: VoiceProviderOptions): VoiceProvider {
  return options.provider === 'retell' ? new RetellVoiceProvider(options) : new SimulatedVoiceProvider();
}

/** Provisions agents in this process, on the process's job engine (`shared`) or on one of its own. */
export async function startProvisioning(
  env: ServiceEnv,
  db: Database,
  options: ProvisioningRuntimeOptions,
  shared?: PgBoss,
): Promise<ProvisioningRuntime> {
  const provider = voiceProvider(options.voice);
  const engine = await roleEngine(env.log, db, shared);
  const { boss } = engine;
  for (const name of PROVISIONING_QUEUES) await ensureQueue(boss, name);

  const jobOptions = {
    retryLimit: options.retryLimit,
    retryDelay: options.retryDelaySeconds,
    retryBackoff: true,
    expireInSeconds: options.jobExpireSeconds,
  };
  let stopped = false;
  let relaying: Promise<unknown> | undefined;
  const relay = () => {
    // One relay at a time in a process; a nudge during one is served by it or by the next period's.
    if (stopped || relaying) return relaying;
    relaying = queueProvisioning(env, async (tx, jobs) => {
      await boss.insert(
        jobs.map((data) => ({
          name: PROVISION,
          data: data satisfies ProvisionJob,
          singletonKey: `${data.agentId}@${data.version}`,
          ...jobOptions,
        })),
        { db: queueSession(tx) } as PgBoss.InsertOptions,
      );
    })
      .catch((error: unknown) => env.log.error({ err: error }, 'provisioning relay failed'))
      .finally(() => (relaying = undefined));
    return relaying;
  };
  const relayer = setInterval(() => void relay(), options.relayMs);
  relayer.unref();

  await boss.work<ProvisionJob>(PROVISION, { includeMetadata: true, pollingIntervalSeconds: 0.5 }, async ([job]) => {
    const log = jobLogger(env.log, { name: PROVISION, id: job!.id });
    try {
      await provisionAgent(env, provider, job!.data.agentId, job!.retryCount >= job!.retryLimit);
    } catch (error) {
      log.warn({ err: error, agentId: job!.data.agentId, retryCount: job!.retryCount }, 'agent provisioning will be tried again');
      throw error;
    }
  });
  await boss.work(DRIFT, { pollingIntervalSeconds: 2 }, async () => {
    await sweepDrift(env, provider);
  });
  const sweeper = setInterval(() => {
    if (stopped) return;
    void boss
      .send(DRIFT, {}, { singletonKey: 'drift', singletonSeconds: options.driftSweepSeconds })
      .catch((error: unknown) => env.log.error({ err: error }, 'could not queue the drift sweep'));
  }, options.driftSweepSeconds * 1000);
  sweeper.unref();

  return {
    provider,
    backlog: queueBacklog(boss, [PROVISION, DRIFT]),
    control: {
      queued: async () => {
        await relay();
      },
    },
    async stop() {
      stopped = true;
      clearInterval(relayer);
      clearInterval(sweeper);
      await relaying;
      await engine.release(10_000);
    },
  };
}
