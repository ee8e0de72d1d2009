import { createHash } from 'node:crypto';
import type { Sentiment } from '../../generated/prisma/client.js';
import type { CallResult, PlaceCall, ReportResult, Telephony } from './telephony.js';

// The default telephony adapter: no network, outcomes drawn deterministically from SIM_SEED and the
// call (same seed, same attempt, same outcome), delivered asynchronously like a provider's, after the
// call's duration times SIM_TIME_SCALE (0 = at once, 1 = real time).

export interface SimulatorOptions {
  seed: string;
  timeScale: number;
}

const SUMMARIES: Record<CallResult['status'], string[]> = {
  completed: [
    'Spoke with the contact; interested and asked for a follow-up.',
    'Reached the contact, who was not interested at this time.',
    'Contact had questions about pricing; answered them.',
  ],
  no_answer: ['No answer.'],
  busy: ['Line busy.'],
  voicemail: ['Reached voicemail; left a short message.'],
  failed: ['The call could not be connected.'],
};

export class SimulatedTelephony implements Telephony {
  /** Calls in progress, each with the delivery of its result. */
  private readonly timers = new Map<NodeJS.Timeout, () => void>();

  constructor(
    private readonly options: SimulatorOptions,
    private readonly report: ReportResult,
  ) {}

  async placeCall(call: PlaceCall): Promise<{ providerCallId: string }> {
    const result = this.outcome(call);
    const deliver = () => this.report(result);
    const delayMs = result.durationSeconds * 1000 * this.options.timeScale;
    if (delayMs <= 0) setImmediate(deliver);
    else {
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          deliver();
        },
        delayMs + 2000 * this.options.timeScale,
      );
      this.timers.set(timer, deliver);
    }
    return { providerCallId: `sim_${call.attemptId}` };
  }

  /**
   * The simulated calls live in this process, so on shutdown they end now and report, rather than be
   * lost with it: nothing is left to lease expiry. (A real provider's calls go on and report to any
   * instance.) After a crash, leases do expire, and the sweep counts those calls as failed.
   */
  stop(): void {
    for (const [timer, deliver] of this.timers) {
      clearTimeout(timer);
      deliver();
    }
    this.timers.clear();
  }

  private outcome(call: PlaceCall): CallResult {
    // Keyed by number and attempt, not by our random ids, so a rerun with the same seed replays the same calls.
    const random = seeded(`${this.options.seed}:${call.to}:${call.attemptNumber}`);
    const roll = random();
    const status: CallResult['status'] =
      roll < 0.45 ? 'completed' : roll < 0.7 ? 'no_answer' : roll < 0.78 ? 'busy' : roll < 0.9 ? 'voicemail' : 'failed';
    const durationSeconds =
      status === 'completed' ? 30 + Math.floor(random() * 270) : status === 'voicemail' ? 20 + Math.floor(random() * 25) : 0;
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    const sentiment: Sentiment = status === 'completed' ? pick(['positive', 'positive', 'neutral', 'negative'] as const) : 'unknown';
    const booked = status === 'completed' && random() < 0.3;
    const doNotCall = status === 'completed' && !booked && random() < 0.06;
    return {
      attemptId: call.attemptId,
      status,
      durationSeconds,
      summary: doNotCall ? 'The contact asked not to be called again.' : booked ? 'Booked an appointment.' : pick(SUMMARIES[status]),
      sentiment: doNotCall ? 'negative' : sentiment,
      disconnectReason: status === 'completed' ? 'user_hangup' : status,
      doNotCall,
      appointment: booked
        ? { scheduledAt: new Date(Date.now() + (1 + Math.floor(random() * 14)) * 86_400_000), notes: 'Booked by the simulated agent.' }
        : undefined,
    };
  }
}

/** A small deterministic generator (sha256 in counter mode), enough for simulated outcomes. */
function seeded(key: string): () => number {
  let counter = 0;
  return () => {
    const digest = createHash('sha256').update(`${key}:${counter++}`).digest();
    return digest.readUInt32BE(0) / 0x1_0000_0000;
  };
}
