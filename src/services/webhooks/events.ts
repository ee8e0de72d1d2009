import { z } from 'zod';
import { CallStatus, CampaignStatus, Sentiment } from '../../generated/prisma/enums.js';
import { CALL_OUTCOMES, IN_FLIGHT_STATUSES } from '../call-outcomes.js';
import { APPOINTMENT_STATUSES } from '../results/appointments.js';

// The events customers receive, one payload shape each. Every delivery's body is
// `{ "type": ..., "timestamp": ..., "data": ... }` (the Standard Webhooks convention); `data` is
// described here, in zod, and published as JSON Schema (docs/webhooks/events.schema.json, and the
// `webhookEventTypes` query). Tests check every event the service sends against these schemas.

const uuid = z.uuid();
const timestamp = z.iso.datetime({ offset: true });
const cents = z.number().int().describe('Cents, as a JSON number (below 2^53).');

const campaignStatus = z.enum(CampaignStatus);
const callStatus = z.enum(CallStatus).exclude(IN_FLIGHT_STATUSES);
const appointment = z.object({
  appointment_id: uuid,
  contact_id: uuid,
  campaign_id: uuid.nullable(),
  call_id: uuid.nullable(),
  status: z.enum(APPOINTMENT_STATUSES),
  scheduled_at: timestamp,
  timezone: z.string(),
});

const bookedExample = {
  appointment_id: '019ab8a2-aaaa-7bbb-8ccc-ddddeeeeffff',
  contact_id: '019ab89f-1111-7222-8333-444455556666',
  campaign_id: '019ab8a0-5b1e-7c3a-9d2f-1e2f3a4b5c6d',
  call_id: '019ab8a1-0c4d-7e5f-8a9b-0c1d2e3f4a5b',
  status: 'scheduled',
  scheduled_at: '2026-11-26T10:00:00.000Z',
  timezone: 'America/New_York',
} as const;

/** A contact's outcome in a campaign once it is done. */
export const CONTACT_OUTCOMES = ['reached', 'not_reached', 'do_not_call', 'consent_missing', 'invalid', 'cancelled'] as const;
export type ContactOutcome = (typeof CONTACT_OUTCOMES)[number];

export const WEBHOOK_EVENTS = {
  'campaign.status_changed': {
    description:
      'A campaign changed status: dispatched, started on schedule, paused (by the user or the dialer, with the reason), resumed, completed or cancelled.',
    data: z.object({
      campaign_id: uuid,
      name: z.string(),
      status: campaignStatus,
      previous_status: campaignStatus,
      paused_reason: z
        .string()
        .nullable()
        .describe('Why it is paused (user_requested, insufficient_credits, high_failure_rate, ...); null unless paused.'),
    }),
    example: {
      campaign_id: '019ab8a0-5b1e-7c3a-9d2f-1e2f3a4b5c6d',
      name: 'Spring reminders',
      status: 'paused',
      previous_status: 'running',
      paused_reason: 'insufficient_credits',
    },
  },
  'call.finished': {
    description:
      'A call attempt ended, whatever its result. `last_attempt` says whether the contact is done in this campaign (no retry follows).',
    data: z.object({
      call_id: uuid,
      campaign_id: uuid,
      contact_id: uuid,
      to_number: z.string().describe('E.164.'),
      status: callStatus,
      call_outcome: z
        .enum(CALL_OUTCOMES)
        .describe('What the call met: human, voicemail, ivr, call_screening, no_answer, busy, failed or invalid_number.'),
      outcome: z
        .enum(CONTACT_OUTCOMES)
        .nullable()
        .describe("The contact's outcome in the campaign when this was its last attempt, else null."),
      disconnect_reason: z.string().nullable(),
      duration_seconds: z.number().int().min(0),
      cost_cents: cents,
      last_attempt: z.boolean(),
      ended_at: timestamp,
    }),
    example: {
      call_id: '019ab8a1-0c4d-7e5f-8a9b-0c1d2e3f4a5b',
      campaign_id: '019ab8a0-5b1e-7c3a-9d2f-1e2f3a4b5c6d',
      contact_id: '019ab89f-1111-7222-8333-444455556666',
      to_number: '+14155550123',
      status: 'completed',
      call_outcome: 'human',
      outcome: 'reached',
      disconnect_reason: 'agent_hangup',
      duration_seconds: 94,
      cost_cents: 16,
      last_attempt: true,
      ended_at: '2026-11-24T15:04:05.123Z',
    },
  },
  'call.analysed': {
    description: "A call's analysis is known: its summary, the callee's sentiment and the provider's analysis data.",
    data: z.object({
      call_id: uuid,
      campaign_id: uuid,
      contact_id: uuid,
      summary: z.string().nullable(),
      sentiment: z.enum(Sentiment),
      analysis: z.record(z.string(), z.unknown()),
    }),
    example: {
      call_id: '019ab8a1-0c4d-7e5f-8a9b-0c1d2e3f4a5b',
      campaign_id: '019ab8a0-5b1e-7c3a-9d2f-1e2f3a4b5c6d',
      contact_id: '019ab89f-1111-7222-8333-444455556666',
      summary: 'Confirmed the appointment for Thursday at 10:00.',
      sentiment: 'positive',
      analysis: { call_successful: true },
    },
  },
  'appointment.booked': {
    description: 'A call booked an appointment.',
    data: appointment,
    example: bookedExample,
  },
  'appointment.changed': {
    description: "An appointment's status or time changed.",
    data: appointment,
    example: { ...bookedExample, status: 'confirmed', scheduled_at: '2026-11-26T11:00:00.000Z' },
  },
  'contact.opted_out': {
    description: 'A callee asked not to be called again; the number is on your do-not-call list from this moment.',
    data: z.object({ phone_number: z.string().describe('E.164.'), contact_id: uuid, campaign_id: uuid, call_id: uuid }),
    example: {
      phone_number: '+14155550123',
      contact_id: '019ab89f-1111-7222-8333-444455556666',
      campaign_id: '019ab8a0-5b1e-7c3a-9d2f-1e2f3a4b5c6d',
      call_id: '019ab8a1-0c4d-7e5f-8a9b-0c1d2e3f4a5b',
    },
  },
  'credits.low': {
    description: 'Your credits (purchased and included, holds aside) fell below the threshold you set (setLowCreditThreshold).',
    data: z.object({ balance_cents: cents, threshold_cents: cents }),
    example: { balance_cents: 480, threshold_cents: 500 },
  },
  'import.finished': {
    description: 'A contact import was written: its new group and what became of its rows.',
    data: z.object({
      contact_group_id: uuid,
      name: z.string(),
      total_imported: z.number().int(),
      total_invalid: z.number().int(),
      total_duplicates: z.number().int(),
      total_do_not_call: z.number().int(),
    }),
    example: {
      contact_group_id: '019ab89e-9999-7888-8777-666655554444',
      name: 'November leads',
      total_imported: 980,
      total_invalid: 12,
      total_duplicates: 5,
      total_do_not_call: 3,
    },
  },
  'phone_number.rested': {
    description:
      'One of your caller IDs was rested: fewer of its latest calls reached a person than its threshold (a sign carriers label it as spam). No call goes out from it until `rested_until`.',
    data: z.object({
      phone_number_id: uuid,
      number: z.string().describe('E.164.'),
      answer_rate: z.number().min(0).max(1).describe('The share of its latest calls that reached a person.'),
      threshold: z.number().min(0).max(1),
      window_calls: z.number().int().describe('How many of its latest calls the rate is over.'),
      rested_until: timestamp,
    }),
    example: {
      phone_number_id: '019ab8a4-2222-7333-8444-555566667777',
      number: '+14155550100',
      answer_rate: 0.08,
      threshold: 0.15,
      window_calls: 50,
      rested_until: '2026-11-25T15:04:05.123Z',
    },
  },
  'webhook_endpoint.disabled': {
    description: 'One of your endpoints was disabled: it answered 410 Gone (`gone`), or every delivery to it failed for days (`failing`).',
    data: z.object({ endpoint_id: uuid, url: z.string(), reason: z.enum(['gone', 'failing']) }),
    example: { endpoint_id: '019ab8a3-1234-7567-89ab-cdef01234567', url: 'https://crm.example.com/hooks', reason: 'failing' },
  },
  'webhook.ping': {
    description: 'A test event, sent to one endpoint on request (pingWebhookEndpoint), whatever event types it takes.',
    data: z.object({ endpoint_id: uuid, message: z.string() }),
    example: { endpoint_id: '019ab8a3-1234-7567-89ab-cdef01234567', message: 'A test event from callflow.' },
  },
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENTS;
export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS) as WebhookEventType[];

/** An event to send: its type, its user, its data; `endpointId` sends it to that one endpoint only (a ping). */
export type OutgoingEvent = {
  [T in WebhookEventType]: { type: T; userId: string; data: z.input<(typeof WEBHOOK_EVENTS)[T]['data']>; endpointId?: string };
}[WebhookEventType];

/** The schema of a whole delivery body of one event type. */
export function bodySchemaOf(type: WebhookEventType) {
  return z.object({ type: z.literal(type), timestamp, data: WEBHOOK_EVENTS[type].data });
}

/** Every event type's body as JSON Schema, with its description and an example body. */
export function eventJsonSchemas(): Record<WebhookEventType, { description: string; schema: unknown; example: unknown }> {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => {
      const event = WEBHOOK_EVENTS[type];
      return [
        type,
        {
          description: event.description,
          schema: z.toJSONSchema(bodySchemaOf(type), { io: 'input' }),
          example: { type, timestamp: '2026-11-24T15:04:05.123Z', data: event.example },
        },
      ];
    }),
  ) as Record<WebhookEventType, { description: string; schema: unknown; example: unknown }>;
}

/** The committed document of every event type (docs/webhooks/events.json): description, JSON Schema, example. */
export function webhookEventsDocument(): string {
  return `${JSON.stringify(eventJsonSchemas(), null, 2)}\n`;
}
