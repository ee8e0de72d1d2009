import type { Prisma } from '../../generated/prisma/client.js';
import type { CallResult } from './telephony.js';

// A provider's result kept on its attempt (`call_attempts.pending_result`) until the dialer applies it,
// so that a result accepted from a webhook survives the process that accepted it.

export function pendingResultJson(result: CallResult): Prisma.InputJsonObject {
  return JSON.parse(JSON.stringify(result)) as Prisma.InputJsonObject;
}

/** The stored result as the dialer takes it (JSON keeps the appointment's time as a string). */
export function readPendingResult(stored: Prisma.JsonValue): CallResult {
  const result = stored as unknown as Omit<CallResult, 'appointment'> & { appointment?: { scheduledAt: string; notes: string } };
  const { appointment, ...rest } = result;
  return appointment ? { ...rest, appointment: { notes: appointment.notes, scheduledAt: new Date(appointment.scheduledAt) } } : rest;
}
