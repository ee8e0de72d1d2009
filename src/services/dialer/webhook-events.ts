import type { ContactOutcome, OutgoingEvent } from '../webhooks/events.js';
import type { Ending } from './decisions.js';
import type { FinishedAttempt, NewAppointment, NotedBooking } from './store/ended-calls.js';
import { appointmentEventData } from '../results/appointments.js';
import { statusOf } from '../call-outcomes.js';
import type { CallResult } from '../voice/providers/telephony.js';

/** What a batch of results tells customers' webhooks: each call's end, its analysis, the appointments it booked, an opt-out. */
export function callEvents(
  finished: FinishedAttempt[],
  endings: Ending[],
  results: Map<string, CallResult>,
  endedAt: Map<string, Date>,
  costs: Map<string, bigint>,
  appointments: NewAppointment[],
): OutgoingEvent[] {
  const events: OutgoingEvent[] = [];
  finished.forEach((f, i) => {
    const result = results.get(f.id)!;
    const contact = endings[i]!.contact;
    const ids = { call_id: f.id, campaign_id: f.campaignId, contact_id: f.contactId };
    events.push({
      type: 'call.finished',
      userId: f.userId,
      data: {
        ...ids,
        to_number: f.phoneNumber,
        status: statusOf(result.outcome),
        call_outcome: result.outcome,
        outcome: contact.state === 'done' ? (contact.outcome as ContactOutcome) : null,
        disconnect_reason: result.disconnectReason ?? null,
        duration_seconds: result.durationSeconds,
        cost_cents: Number(costs.get(f.id) ?? 0n),
        last_attempt: contact.state === 'done',
        ended_at: endedAt.get(f.id)!.toISOString(),
      },
    });
    if (result.summary || result.sentiment) {
      events.push({
        type: 'call.analysed',
        userId: f.userId,
        data: { ...ids, summary: result.summary ?? null, sentiment: result.sentiment ?? 'unknown', analysis: result.analysis ?? {} },
      });
    }
    // An opt-out said through the in-call tool was announced when it was said.
    if (result.doNotCall && !f.optedOutAt) {
      events.push({ type: 'contact.opted_out', userId: f.userId, data: { ...ids, phone_number: f.phoneNumber } });
    }
  });
  for (const a of appointments) {
    events.push({
      type: 'appointment.booked',
      userId: a.userId,
      data: {
        appointment_id: a.id,
        contact_id: a.contactId,
        campaign_id: a.campaignId,
        call_id: a.callAttemptId,
        status: 'scheduled',
        scheduled_at: new Date(a.scheduledAt).toISOString(),
        timezone: a.timezone,
      },
    });
  }
  return events;
}

/** Appointments booked during calls that their calls' analyses confirmed. */
export function bookingEvents(confirmed: NotedBooking[]): OutgoingEvent[] {
  return confirmed.map((a) => ({ type: 'appointment.changed', userId: a.userId, data: appointmentEventData(a) }));
}
