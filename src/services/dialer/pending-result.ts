import { outcomeOfLegacy, type CallOutcome, type FinalStatus } from '../call-outcomes.js';
import type { CallResult } from '../voice/providers/telephony.js';

// A provider's result kept on its attempt (`call_attempts.pending_result`) until the dialer applies it,
// so that a result accepted from a webhook survives the process that accepted it.

/** The result as it is stored (JSON: the appointment's time becomes a string). */
export function pendingResultJson(result: CallResult): string {
  return JSON.stringify(result);
}

type Stored = Omit<CallResult, 'appointment' | 'outcome' | 'callbackAt'> & {
  appointment?: { scheduledAt: string; notes: string };
  callbackAt?: string;
  outcome?: CallOutcome;
  /** Results stored before outcomes were kept. */
  status?: FinalStatus;
  invalidDestination?: boolean;
};

/** The stored result as the dialer takes it (JSON keeps the appointment's and callback's times as strings). */
export function readPendingResult(stored: unknown): CallResult {
  const { appointment, outcome, status, invalidDestination, callbackAt, ...rest } = stored as Stored;
  const result = {
    ...rest,
    outcome: outcome ?? outcomeOfLegacy(status ?? 'failed', invalidDestination === true),
    ...(callbackAt ? { callbackAt: new Date(callbackAt) } : {}),
  };
  return appointment ? { ...result, appointment: { notes: appointment.notes, scheduledAt: new Date(appointment.scheduledAt) } } : result;
}
