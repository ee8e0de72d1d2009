import { z } from 'zod';
import type { Appointment } from '../../generated/prisma/client.js';
import { datetime, id, iso, isoOrNull, json } from './common.js';

// The v1 appointment (contract 2.1): `contacts` is the snapshot of the contact taken at booking,
// `appointment_data` the details of the booking (source call, notes).

export const v1Appointment = z
  .object({
    id,
    status: z.string().describe('scheduled, confirmed, cancelled, completed or no_show.'),
    contact_id: id.nullable(),
    campaign_id: id.nullable(),
    scheduled_at: datetime.nullable(),
    timezone: z.string().nullable(),
    contacts: json,
    appointment_data: json,
    created_at: datetime,
  })
  .meta({ id: 'Appointment' });

export function toV1Appointment(a: Appointment): z.input<typeof v1Appointment> {
  return {
    id: a.id,
    status: a.status,
    contact_id: a.contactId,
    campaign_id: a.campaignId,
    scheduled_at: isoOrNull(a.scheduledAt),
    timezone: a.timezone,
    contacts: a.contactSnapshot,
    appointment_data: a.appointmentData,
    created_at: iso(a.createdAt),
  };
}
