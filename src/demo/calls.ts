import { DEFAULT_DIALER_OPTIONS } from '../services/dialer/options.js';
import { Dialer } from '../services/dialer/engine.js';
import type { CallResult, PlaceCall, Telephony } from '../services/voice/providers/telephony.js';
import type { Clock, ServiceEnv } from '../services/context.js';

// The demo's finished campaign is called by the real dialer, so that its history, report, charges and
// appointment are exactly what a campaign leaves behind; only the telephony is a script, which answers
// each number as written and at once.

/** How a number answers: the result of its call, without the attempt's id. */
export type CallScript = (call: PlaceCall) => Omit<CallResult, 'attemptId'>;

/** A clock that stands still unless moved, so the demo's calls land at chosen moments. */
export class DemoClock implements Clock {
  constructor(private time: Date) {}
  now = () => new Date(this.time);
  advance(ms: number) {
    this.time = new Date(this.time.getTime() + ms);
  }
}

/** The longest the demo runs a campaign: more rounds than a campaign of a few contacts can need. */
const MAX_ROUNDS = 100;

/** Ticks the campaign and applies its calls' results until nothing is due; each round takes `roundMs` of the clock. */
export async function callThrough(env: ServiceEnv & { clock: DemoClock }, campaignId: string, script: CallScript, roundMs: number) {
  const due = new Set<string>();
  const results: CallResult[] = [];
  const telephony: Telephony = {
    async placeCall(call) {
      results.push({ ...script(call), attemptId: call.attemptId });
      return { providerCallId: `demo_${call.attemptId}` };
    },
    stop() {},
  };
  const dialer = new Dialer(
    env,
    () => telephony,
    (id, at) => (!at || at <= env.clock.now() ? due.add(id) : undefined),
    {
      ...DEFAULT_DIALER_OPTIONS,
    },
  );
  due.add(campaignId);
  for (let round = 0; round < MAX_ROUNDS && due.size; round += 1) {
    due.clear();
    await dialer.tick(campaignId);
    await dialer.settled();
    env.clock.advance(roundMs);
    for (const result of results.splice(0)) dialer.report(result);
    await dialer.settled();
  }
}
