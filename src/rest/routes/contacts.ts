import { z } from 'zod';
import * as contacts from '../../services/contacts/contacts.js';
import * as groups from '../../services/contacts/groups.js';
import { ARRIVING_BATCH_BYTES, importArrivingRows, importContacts } from '../../services/contacts/import.js';
import { ValidationError } from '../../services/errors.js';
import { snakeKeys } from '../../key-case.js';
import { describedAs } from '../../services/validation.js';
import { fromJsonText } from '../forms.js';
import { defineRoute } from '../route.js';
import { id } from '../serializers/common.js';
import { toV1Contact, toV1ImportResult, v1Contact, v1ContactInclude, v1ImportResult } from '../serializers/contacts.js';

const byId = z.object({ id });

/** A list field of a form: repeated fields, one field holding a JSON list, or one plain value. */
const formList = z.union([fromJsonText(z.array(z.string())), z.string().transform((value) => [value])]);

const importBody = z.object({
  groupName: z.string().describe('Name of the contact group the import creates.'),
  description: z.string().optional(),
  // The import checks each row once, with these same messages; checking here too would copy every row.
  csvData: fromJsonText(
    describedAs(z.unknown(), { type: 'array', items: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} } }),
  )
    .optional()
    .describe('Rows as objects keyed by column name.'),
  selectedHeaders: formList.optional().describe('Columns to keep; all when absent.'),
  defaultCountry: z.string().optional().describe('ISO country for numbers without a country code (default US).'),
  file: z
    .instanceof(File)
    .optional()
    .meta({ type: 'string', format: 'binary', description: 'A CSV file (multipart/form-data), instead of csvData.' }),
});

const patchBody = z.object({
  phone_number: z.string().max(32),
  data: fromJsonText(z.record(z.string(), z.unknown())).optional(),
  contact_group_id: id.nullish(),
});

export const contactRoutes = [
  defineRoute({
    method: 'POST',
    path: '/contacts/import/',
    operationId: 'importContacts',
    summary: 'Import contacts into a new contact group (rows as JSON, or a CSV file)',
    tag: 'Contacts',
    body: importBody,
    example: {
      groupName: 'Spring renewals, Denver',
      description: 'Members whose plan renews in April',
      csvData: [
        { first_name: 'Maria', last_name: 'Lopez', phone_number: '+13035550142', plan: 'Gold' },
        { first_name: 'James', last_name: 'Okafor', phone_number: '(720) 555-0178', plan: 'Silver' },
      ],
      selectedHeaders: ['first_name', 'last_name', 'phone_number', 'plan'],
      defaultCountry: 'US',
    },
    largeBody: true,
    rateLimit: 'import',
    fieldCase: 'camel',
    status: 201,
    response: v1ImportResult,
    handler: async ({ body }, ctx) => {
      const { file, ...rest } = body;
      if (file && file.size === 0) throw ValidationError.field('file', 'The submitted file is empty.');
      const csv_text = file ? await file.text() : undefined;
      return toV1ImportResult(await importContacts(ctx, { ...snakeKeys(rest), csv_text }));
    },
    // JSON rows are imported while the body arrives, rather than once it has all arrived and been parsed.
    streamList: {
      field: 'csvData',
      batchBytes: ARRIVING_BATCH_BYTES,
      handler: async ({ body }, rows, ctx) => {
        const { file: _file, csvData: _rows, ...rest } = body;
        const result = await importArrivingRows(ctx, snakeKeys(rest), rows);
        return result && toV1ImportResult(result);
      },
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/contacts/contacts/{id}/',
    operationId: 'getContact',
    summary: 'Get a contact',
    tag: 'Contacts',
    params: byId,
    status: 200,
    response: v1Contact,
    handler: async ({ params }, ctx) => toV1Contact(await contacts.getContact(ctx, params.id, { include: v1ContactInclude })),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/contacts/contacts/{id}/',
    operationId: 'deleteContact',
    summary: 'Delete a contact: erased where calls or appointments name it (their anonymous facts stay), else deleted',
    tag: 'Contacts',
    params: byId,
    status: 204,
    errors: { 409: 'A call to the contact is in progress.' },
    handler: async ({ params }, ctx) => {
      await contacts.deleteContact(ctx, params.id);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/contacts/groups/{id}/',
    operationId: 'upsertContactInGroup',
    summary: 'Create or update one contact of the group by phone number, or move it to another group',
    tag: 'Contacts',
    params: byId,
    body: patchBody,
    example: { phone_number: '+13035550142', data: { first_name: 'Maria', last_name: 'Lopez', plan: 'Gold' } },
    status: 200,
    response: v1Contact,
    handler: async ({ params, body }, ctx) =>
      toV1Contact(await contacts.upsertContactInGroup(ctx, params.id, body, { include: v1ContactInclude })),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/contacts/groups/{id}/',
    operationId: 'deleteContactGroup',
    summary: 'Delete a contact group and its contacts; archived instead while campaigns that called it keep its history',
    tag: 'Contacts',
    params: byId,
    status: 204,
    errors: { 409: 'A campaign that may still dial uses the group, or a call to one of its contacts is in progress.' },
    handler: async ({ params }, ctx) => {
      await groups.deleteGroup(ctx, params.id);
    },
  }),
];
