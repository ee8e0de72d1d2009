import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import type { Sentiment } from '../../../../generated/prisma/client.js';
import type { CallOutcome } from '../../../call-outcomes.js';
import type { CallResult, PlaceCall, ReportResult, Telephony } from '../telephony.js';

// The default telephony adapter: no network, outcomes drawn deterministically from SIM_SEED and the
// call (same seed, same attempt, same outcome), delivered asynchronously like a provider's, after the
// call's duration times SIM_TIME_SCALE (0 = at once, 1 = real time). It produces every outcome.

export interface SimulatorOptions {
  seed: string;
  timeScale: number;
  /** Share of conversations in which the callee asks to be called back (0, the default: none). */
  callbackRate?: number;
  /**
   * A file the simulator appends each call's start and end to, as a provider keeps its call log (one
   * JSON object a line, written at once): what a checker compares the service's records with.
   */
  callLog?: string | undefined;
}

const SUMMARIES: Record<CallOutcome, string[]> = {
  human: [
    'Spoke with the contact; interested and asked for a follow-up.',
    'Reached the contact, who was not interested at this time.',
    'Contact had questions about pricing; answered them.',
  ],
  voicemail: ['Reached voicemail.'],
  ivr: ['A phone menu answered; hung up.'],
  call_screening: ['The call was screened by the phone; the contact did not pick up.'],
  no_answer: ['No answer.'],
  busy: ['Line busy.'],
  failed: ['The call could not be connected.'],
  invalid_number: ['The number is not in service.'],
};

/** Of every hundred attempts to a valid number, how many meet each outcome. */
const SHARES: [CallOutcome, number][] = [
  ['human', 45],
  ['no_answer', 22],
  ['busy', 7],
  ['voicemail', 12],
  ['ivr', 4],
  ['call_screening', 4],
  ['failed', 6],
];

const DAY_MS = 86_400_000;

/** One number in this many is not in service, on every attempt. */
const INVALID_ONE_IN = 40;

export class SimulatedTelephony implements Telephony {
  /** Calls in progress, each with the delivery of its result. */
  private readonly timers = new Map<NodeJS.Timeout, () => void>();

  constructor(
    private readonly options: SimulatorOptions,
    private readonly report: ReportResult,
  ) {}

  async placeCall(call: PlaceCall): Promise<{ providerCallId: string }> {
    const result = this.outcome(call);
    this.logCall({ attemptId: call.attemptId, to: call.to, placedAt: new Date().toISOString() });
    const deliver = () => {
      this.logCall({ attemptId: call.attemptId, endedAt: new Date().toISOString() });
      this.report(result);
    };
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

  private logCall(entry: Record<string, string>): void {
    if (this.options.callLog) appendFileSync(this.options.callLog, `${JSON.stringify(entry)}\n`);
  }

  private outcome(call: PlaceCall): CallResult {
    // Keyed by number and attempt, not by our random ids, so a rerun with the same seed replays the same calls.
    const random = seeded(`${this.options.seed}:${call.to}:${call.attemptNumber}`);
    const outcome = seeded(`${this.options.seed}:${call.to}`)() * INVALID_ONE_IN < 1 ? 'invalid_number' : draw(random());
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    const messageLeft = outcome === 'voicemail' && call.voicemailMessage !== null;
    const durationSeconds = durationOf(outcome, messageLeft, random);
    const sentiment: Sentiment = outcome === 'human' ? pick(['positive', 'positive', 'neutral', 'negative'] as const) : 'unknown';
    const booked = outcome === 'human' && random() < 0.3;
    const doNotCall = outcome === 'human' && !booked && random() < 0.06;
    // "Call me tomorrow": a day later, in the simulator's time (SIM_TIME_SCALE), so a fast run sees it made.
    const rate = this.options.callbackRate ?? 0;
    const callback = outcome === 'human' && !booked && !doNotCall && rate > 0 && random() < rate;
    return {
      attemptId: call.attemptId,
      outcome,
      durationSeconds,
      messageLeft: outcome === 'voicemail' ? messageLeft : undefined,
      summary: doNotCall
        ? 'The contact asked not to be called again.'
        : callback
          ? 'Asked to be called back tomorrow after 3.'
          : booked
            ? 'Booked an appointment.'
            : messageLeft
              ? `Left a message: ${call.voicemailMessage}`
              : pick(SUMMARIES[outcome]),
      sentiment: doNotCall ? 'negative' : sentiment,
      disconnectReason: outcome === 'human' ? 'user_hangup' : outcome,
      doNotCall,
      callbackAt: callback ? new Date(Date.now() + DAY_MS * this.options.timeScale) : undefined,
      appointment: booked
        ? { scheduledAt: new Date(Date.now() + (1 + Math.floor(random() * 14)) * 86_400_000), notes: 'Booked by the simulated agent.' }
        : undefined,
    };
  }
}

function draw(roll: number): CallOutcome {
  let bound = 0;
  for (const [outcome, share] of SHARES) {
    bound += share / 100;
    if (roll < bound) return outcome;
  }
  return 'failed';
}

/** Seconds from answer to hang-up; calls that never connected have none. */
function durationOf(outcome: CallOutcome, messageLeft: boolean, random: () => number): number {
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low));
  switch (outcome) {
    case 'human':
      return between(30, 300);
    case 'voicemail':
      // Detecting the greeting takes a few seconds; a message then takes its own time.
      return messageLeft ? between(20, 45) : between(3, 7);
    case 'ivr':
    case 'call_screening':
      return between(4, 15);
    default:
      return 0;
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
