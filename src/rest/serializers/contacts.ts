import { z } from 'zod';
import type { Contact, ContactGroup } from '../../generated/prisma/client.js';
import { readData } from '../../services/contacts/fields.js';
import type { ImportResult } from '../../services/contacts/import.js';
import { id, json } from './common.js';

// v1 shapes of a contact (contract 2.3: the stored data flattened, plus `id`) and an import result (2.10).

export const v1PhoneEntry = z.object({ number: z.string(), label: z.string() }).meta({ id: 'ContactPhoneNumber' });

export const v1Contact = z
  .object({
    id,
    address: z.string(),
    contact_group_id: id,
    custom_fields: z.record(z.string(), z.string()),
    email: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    phone_number: z.string().max(32),
    phone_numbers: z.array(v1PhoneEntry),
    csv_headers: z.array(z.string()),
    data: json,
    status: z.enum(['active', 'invalid', 'do_not_call']),
  })
  .meta({ id: 'Contact' });

export const v1ImportResult = z
  .object({
    success: z.boolean(),
    totalImported: z.number().int(),
    groupId: id,
    totalInvalid: z.number().int(),
    totalDuplicates: z.number().int(),
    totalDoNotCall: z.number().int(),
    refusedRows: z
      .array(
        z
          .object({
            row: z.number().int().meta({ description: '1 for the first row of data (the line after the header).' }),
            field: z.string().meta({ description: 'The column, as the import named it.' }),
            message: z.string(),
            reason: z.enum(['invalid', 'duplicate', 'do_not_call']),
          })
          .meta({ id: 'RefusedImportRow' }),
      )
      .meta({
        description:
          'Rows that will not be called, and why: duplicates were merged into the first row of their number and not imported; invalid and do_not_call rows were imported with that status. The first 100, in row order.',
      }),
  })
  .meta({ id: 'ImportResult' });

export const v1ContactInclude = { group: { select: { csvHeaders: true } } };

type ContactWithGroup = Contact & { group: Pick<ContactGroup, 'csvHeaders'> };

/** Blank standard fields are empty strings: the contract types them as (non-null) strings. */
export function toV1Contact(contact: ContactWithGroup): z.input<typeof v1Contact> {
  const data = readData(contact.data);
  return {
    id: contact.id,
    address: data.address ?? '',
    contact_group_id: contact.groupId,
    custom_fields: data.custom_fields,
    email: data.email ?? '',
    first_name: data.first_name ?? '',
    last_name: data.last_name ?? '',
    phone_number: contact.phoneNumber ?? '',
    phone_numbers: data.phone_numbers ?? [],
    csv_headers: contact.group.csvHeaders as string[],
    data: contact.data,
    status: contact.status,
  };
}

export const toV1ImportResult = (result: ImportResult): z.input<typeof v1ImportResult> => result;
