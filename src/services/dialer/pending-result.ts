import type { CallResult } from './telephony.js';

// A provider's result kept on its attempt (`call_attempts.pending_result`) until the dialer applies it,
// so that a result accepted from a webhook survives the process that accepted it.

/** The result as it is stored (JSON: the appointment's time becomes a string). */
export function pendingResultJson(result: CallResult): string {
  return JSON.stringify(result);
}

/** The stored result as the dialer takes it (JSON keeps the appointment's time as a string). */
export function readPendingResult(stored: unknown): CallResult {
  const result = stored as Omit<CallResult, 'appointment'> & { appointment?: { scheduledAt: string; notes: string } };
  const { appointment, ...rest } = result;
  return appointment ? { ...rest, appointment: { notes: appointment.notes, scheduledAt: new Date(appointment.scheduledAt) } } : rest;
}
