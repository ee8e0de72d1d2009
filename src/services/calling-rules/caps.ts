import rulesFile from './data/calling-rules.json' with { type: 'json' };

// How often one person may be called: `frequencyCaps` in data/calling-rules.json (the table for people:
// docs/compliance-rules.md). A cap counts every call the customer placed to the number, from any of its
// campaigns, in the window before the moment of the call; some also pause calls after a refusal. The
// dialer reads those calls under a lock of the number (store/placing.ts), so that two workers never both
// place the call that goes over.

interface CapsData {
  version: string;
  rules: readonly { region: string; name: string; source: string; calls: number; hours: number; pauseAfterRefusalDays?: number }[];
}

export interface CapRule {
  region: string;
  calls: number;
  /** The window the calls are counted in. */
  windowMs: number;
  /** How long no call is made after a refusal; 0: no pause. */
  pauseMs: number;
}

const data = (rulesFile as { frequencyCaps: CapsData }).frequencyCaps;

export const CAPS_VERSION = data.version;

const HOUR_MS = 3_600_000;

// The data is edited by hand: a slip stops the module loading.
const RULES: readonly CapRule[] = data.rules.map((rule) => {
  const pauseDays = rule.pauseAfterRefusalDays ?? 0;
  if (!(Number.isInteger(rule.calls) && rule.calls > 0 && rule.hours > 0 && pauseDays >= 0))
    throw new Error(`calling-rules.json: frequency cap of ${rule.region} needs calls >= 1, hours > 0 and a pause >= 0`);
  return { region: rule.region, calls: rule.calls, windowMs: rule.hours * HOUR_MS, pauseMs: pauseDays * 24 * HOUR_MS };
});

/** How far back a cap may look: its longest window or pause. Calls older than this never count. */
export const CAP_LOOKBACK_MS = Math.max(0, ...RULES.map((rule) => Math.max(rule.windowMs, rule.pauseMs)));

/** The caps that count calls to a callee of this region: the region's own and its country's (US-FL: US-FL and US). */
export function capsOf(region: string | null): readonly CapRule[] {
  if (region === null) return [];
  const code = region.toUpperCase();
  const country = code.split('-')[0];
  return RULES.filter((rule) => rule.region === code || rule.region === country);
}

/** The calls the customer placed to one number within CAP_LOOKBACK_MS, and its latest refusal then. */
export interface CallHistory {
  placed: readonly Date[];
  refusedAt: Date | null;
}

/**
 * Null when no cap of the region holds a call at `now`; otherwise the rule's region and the first moment
 * every cap allows one: when the oldest call of a full window leaves it, or a refusal's pause ends. A call
 * exactly one window old no longer counts.
 */
export function capBlock(now: Date, region: string | null, history: CallHistory): { region: string; until: Date } | null {
  let block: { region: string; until: Date } | null = null;
  for (const rule of capsOf(region)) {
    const since = now.getTime() - rule.windowMs;
    const counted = history.placed
      .map((at) => at.getTime())
      .filter((at) => at > since && at <= now.getTime())
      .sort((a, b) => a - b);
    const ends = [];
    if (counted.length >= rule.calls) ends.push(counted[counted.length - rule.calls]! + rule.windowMs);
    if (rule.pauseMs && history.refusedAt && history.refusedAt.getTime() + rule.pauseMs > now.getTime())
      ends.push(history.refusedAt.getTime() + rule.pauseMs);
    const until = Math.max(...ends);
    if (ends.length && (!block || until > block.until.getTime())) block = { region: rule.region, until: new Date(until) };
  }
  return block;
}
