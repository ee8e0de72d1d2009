import { CallOutcome, type CallStatus } from '../generated/prisma/client.js';

// The words every domain shares about a call: one outcome vocabulary for every provider (each adapter
// maps its own reports onto these words, and everything after — retries, billing, reports, events — reads
// the outcome alone), the status each outcome shows, and which statuses mean a call is still in flight.

export const CALL_OUTCOMES = Object.values(CallOutcome);
export type { CallOutcome };

/** The status a finished call shows where only the coarser v1 statuses exist. */
export type FinalStatus = Extract<CallStatus, 'completed' | 'no_answer' | 'busy' | 'failed' | 'voicemail'>;

/**
 * A machine that answered is shown as v1 shows voicemail (a phone menu was `voicemail` before outcomes
 * were kept); a call screened by the phone, like one nobody picked up, did not reach the person.
 */
const STATUS_OF: Record<CallOutcome, FinalStatus> = {
  human: 'completed',
  voicemail: 'voicemail',
  ivr: 'voicemail',
  call_screening: 'no_answer',
  no_answer: 'no_answer',
  busy: 'busy',
  failed: 'failed',
  invalid_number: 'failed',
};

export const statusOf = (outcome: CallOutcome): FinalStatus => STATUS_OF[outcome];

/** A call in one of these is still in flight: a provider's report about it may still change it. */
export const IN_FLIGHT_STATUSES = ['queued', 'ringing', 'in_progress'] as const satisfies readonly CallStatus[];

/** The same list as SQL, for `status IN ${IN_FLIGHT_SQL}`; it reads as the partial indexes' predicates do. */
export const IN_FLIGHT_SQL = `(${IN_FLIGHT_STATUSES.map((status) => `'${status}'`).join(', ')})`;

const IN_FLIGHT: ReadonlySet<string> = new Set(IN_FLIGHT_STATUSES);

export const isUnfinished = (status: string) => IN_FLIGHT.has(status);

/** The outcome a result stored before outcomes were kept meant: the status alone, `invalidDestination` aside. */
export function outcomeOfLegacy(status: FinalStatus, invalidDestination: boolean): CallOutcome {
  if (invalidDestination) return 'invalid_number';
  return status === 'completed' ? 'human' : status;
}
