import { rateLimit } from '../../ops/rate-limits.js';
import * as contacts from '../../services/contacts/contacts.js';
import * as dnc from '../../services/contacts/do-not-call.js';
import { readData } from '../../services/contacts/fields.js';
import * as groups from '../../services/contacts/groups.js';
import { importContacts, MAX_REFUSED_ROWS, type RefusedRow } from '../../services/contacts/import.js';
import { ValidationError } from '../../services/errors.js';
import { builder } from '../builder.js';
import { compiledConnection, compiledItem, jsonTextValue } from '../compiled-reads/declare.js';
import { withServiceInput } from '../service-input.js';

export const ContactStatus = builder.enumType('ContactStatus', { values: ['active', 'invalid', 'do_not_call'] as const });

const CONTACTS_PAGE = { cursor: 'id', totalCount: true } as const;
const contactsQuery = (args: contacts.ContactFilter) => ({
  where: contacts.contactFilterWhere(args),
  orderBy: [{ createdAt: 'asc' as const }, { id: 'asc' as const }],
});

export const ContactGroup = builder.prismaObject('ContactGroup', {
  description: 'Contacts imported together; a campaign calls one group.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    total: t.exposeInt('total', { description: 'Number of contacts in the group, whatever their status (erased ones not counted).' }),
    csvHeaders: t.stringList({
      description: 'Columns of the import, in file order.',
      select: { csvHeaders: true },
      resolve: (g) => g.csvHeaders as string[],
    }),
    archivedAt: t.expose('archivedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the group was deleted while campaigns that called it keep their history (seen only through those campaigns).',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    contacts: t.relatedConnection('contacts', {
      ...CONTACTS_PAGE,
      args: {
        status: t.arg({ type: ContactStatus }),
        search: t.arg.string({ description: 'Part of the name (any case) or of the number.' }),
      },
      query: contactsQuery,
      extensions: compiledConnection(CONTACTS_PAGE, contactsQuery),
    }),
  }),
});

const ContactPhoneNumber = builder.objectRef<{ number: string; label: string }>('ContactPhoneNumber').implement({
  fields: (t) => ({ number: t.exposeString('number'), label: t.exposeString('label') }),
});

export const Contact = builder.prismaObject('Contact', {
  description: "One person to call: the imported row's standard fields, custom fields and a normalized number.",
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    group: t.relation('group'),
    phoneNumber: t.exposeString('phoneNumber', { nullable: true, description: 'E.164 when valid, else as given.' }),
    status: t.expose('status', { type: ContactStatus }),
    name: t.exposeString('name'),
    firstName: t.string({
      nullable: true,
      select: { data: true },
      resolve: (c) => readData(c.data).first_name ?? null,
      extensions: jsonTextValue('data', 'first_name'),
    }),
    lastName: t.string({
      nullable: true,
      select: { data: true },
      resolve: (c) => readData(c.data).last_name ?? null,
      extensions: jsonTextValue('data', 'last_name'),
    }),
    email: t.string({
      nullable: true,
      select: { data: true },
      resolve: (c) => readData(c.data).email ?? null,
      extensions: jsonTextValue('data', 'email'),
    }),
    address: t.string({
      nullable: true,
      select: { data: true },
      resolve: (c) => readData(c.data).address ?? null,
      extensions: jsonTextValue('data', 'address'),
    }),
    phoneNumbers: t.field({ type: [ContactPhoneNumber], select: { data: true }, resolve: (c) => readData(c.data).phone_numbers ?? [] }),
    customFields: t.field({ type: 'JSON', select: { data: true }, resolve: (c) => readData(c.data).custom_fields }),
    timezone: t.exposeString('timezone', { nullable: true }),
    data: t.expose('data', { type: 'JSON' }),
    erasedAt: t.expose('erasedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the person was erased: no personal data is left, and the contact is seen only through the history of its calls.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

// Not select-only like the other types: removeDoNotCall answers the entry it deleted, which could not be
// read again for a missing column.
export const DoNotCallEntry = builder.prismaObject('DoNotCallEntry', {
  description: 'A number never to be called, in any group.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    phoneNumber: t.exposeString('phoneNumber'),
    source: t.exposeString('source', { description: 'manual, contact (marked on a contact) or call (the callee asked).' }),
    reason: t.exposeString('reason'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

// countGroups counts the rows the list query reads.
const GROUPS_PAGE = { cursor: 'id', totalCount: true } as const;

builder.queryFields((t) => ({
  contactGroups: t.prismaConnection({
    type: 'ContactGroup',
    cursor: GROUPS_PAGE.cursor,
    authScopes: { authenticated: true },
    totalCount: (_parent, _args, ctx) => groups.countGroups(ctx.service),
    resolve: (query, _root, _args, ctx) => groups.listGroups(ctx.service, query),
    extensions: compiledConnection(GROUPS_PAGE, (_args, ctx) => groups.groupListQuery(ctx.service)),
  }),
  contactGroup: t.prismaField({
    type: 'ContactGroup',
    nullable: true,
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => groups.getGroup(ctx.service, args.id, query),
    extensions: compiledItem((args: { id: string }, ctx) => groups.groupItemQuery(ctx.service, args.id)),
  }),
  contact: t.prismaField({
    type: 'Contact',
    nullable: true,
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => contacts.getContact(ctx.service, args.id, query),
    extensions: compiledItem((args: { id: string }, ctx) => contacts.contactItemQuery(ctx.service, args.id)),
  }),
  doNotCallEntries: t.prismaConnection({
    type: 'DoNotCallEntry',
    cursor: 'id',
    authScopes: { authenticated: true },
    totalCount: (_parent, _args, ctx) => dnc.countDoNotCall(ctx.service),
    resolve: (query, _root, _args, ctx) => dnc.listDoNotCall(ctx.service, query),
  }),
}));

const ImportContactsInput = builder.inputType('ImportContactsInput', {
  fields: (t) => ({
    groupName: t.string({ required: true }),
    description: t.string(),
    rows: t.field({
      type: ['JSON'],
      description: 'Rows as objects keyed by column name (or send `file`).',
      extensions: { serviceName: 'csv_data' },
    }),
    file: t.field({ type: 'File', description: 'A CSV file (or send `rows`).' }),
    selectedHeaders: t.stringList({ description: 'Columns to keep; all when absent.' }),
    defaultCountry: t.string({ description: 'ISO country for numbers without a country code (default US).' }),
  }),
});

const RefusalReason = builder.enumType('ImportRefusalReason', {
  description:
    'duplicate: merged into the first row of its number, not imported; invalid, do_not_call: imported with that status, never called.',
  values: ['invalid', 'duplicate', 'do_not_call'] as const,
});

const RefusedImportRow = builder.objectRef<RefusedRow>('RefusedImportRow').implement({
  description: 'A row of an import that will not be called, and why.',
  fields: (t) => ({
    row: t.exposeInt('row', { description: '1 for the first row of data (the line after a CSV file’s header).' }),
    field: t.exposeString('field', { description: 'The column, as the import named it.' }),
    message: t.exposeString('message'),
    reason: t.expose('reason', { type: RefusalReason }),
  }),
});

const ImportContactsResult = builder.objectRef<Awaited<ReturnType<typeof importContacts>>>('ImportContactsResult').implement({
  fields: (t) => ({
    success: t.exposeBoolean('success'),
    groupId: t.expose('groupId', { type: 'UUID' }),
    group: t.prismaField({
      type: 'ContactGroup',
      resolve: (query, result, _args, ctx) => groups.getGroup(ctx.service, result.groupId, query),
    }),
    totalImported: t.exposeInt('totalImported'),
    totalInvalid: t.exposeInt('totalInvalid'),
    totalDuplicates: t.exposeInt('totalDuplicates'),
    totalDoNotCall: t.exposeInt('totalDoNotCall'),
    refusedRows: t.field({
      type: [RefusedImportRow],
      description: `The first ${MAX_REFUSED_ROWS} rows that will not be called, in row order; the totals count them all.`,
      resolve: (result) => result.refusedRows,
    }),
  }),
});

const UpdateContactGroupInput = builder.inputType('UpdateContactGroupInput', {
  fields: (t) => ({ name: t.string(), description: t.string() }),
});

const UpsertContactInput = builder.inputType('UpsertContactInput', {
  fields: (t) => ({
    phoneNumber: t.string({ required: true, description: 'Finds the contact in the group; creates it when absent.' }),
    data: t.field({ type: 'JSON', description: 'Fields to merge into the contact (standard or custom).' }),
    moveToGroupId: t.field({
      type: 'UUID',
      description: "Another of the user's groups to move the contact to.",
      extensions: { serviceName: 'contact_group_id' },
    }),
  }),
});

const UpdateContactInput = builder.inputType('UpdateContactInput', {
  fields: (t) => ({
    data: t.field({ type: 'JSON', description: 'Fields to merge into the contact (standard or custom).' }),
    status: t.field({ type: ContactStatus, description: 'do_not_call puts the number on the do-not-call list.' }),
  }),
});

const AddDoNotCallInput = builder.inputType('AddDoNotCallInput', {
  fields: (t) => ({ phoneNumber: t.string({ required: true }), reason: t.string() }),
});

const DeletionOutcome = builder.enumType('DeletionOutcome', {
  description: 'What a delete did; no delete ever loses call history or money records.',
  values: {
    deleted: { description: 'Removed entirely: no history referred to it.' },
    erased: {
      description:
        "A contact that campaigns called or an appointment names: the person's data is gone for good, the anonymous facts of the calls stay.",
    },
    archived: {
      description:
        'A group that campaigns called: hidden from every list and lookup, nothing in it callable; those campaigns keep their history.',
    },
  } as const,
});

const Deleted = builder.objectRef<{ id: string; outcome: 'deleted' | 'erased' }>('Deleted').implement({
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    outcome: t.expose('outcome', { type: DeletionOutcome }),
  }),
});

const ContactGroupDeletion = builder.objectRef<{ id: string } & groups.GroupRemoval>('ContactGroupDeletion').implement({
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    outcome: t.expose('outcome', { type: DeletionOutcome }),
    erasedContacts: t.exposeInt('erasedContacts', {
      description: 'Contacts erased: campaigns called them, so their anonymous facts stay.',
    }),
    deletedContacts: t.exposeInt('deletedContacts', { description: 'Contacts nothing referred to, deleted entirely.' }),
    deletedCampaigns: t.exposeInt('deletedCampaigns', { description: 'Campaigns on the group that never started, deleted with it.' }),
  }),
});

const ImportDoNotCallListInput = builder.inputType('ImportDoNotCallListInput', {
  fields: (t) => ({
    name: t.string({ required: true, description: 'What the list is, up to 100 characters; kept as each entry’s reason.' }),
    numbers: t.stringList({ required: true, description: 'Phone numbers, in any format your country’s numbers are written in.' }),
  }),
});

const DoNotCallListImport = builder.objectRef<dnc.ListImport>('DoNotCallListImport').implement({
  fields: (t) => ({
    listed: t.exposeInt('listed', { description: 'Numbers put on the list.' }),
    alreadyListed: t.exposeInt('alreadyListed', { description: 'Numbers that were on it already, left as they are.' }),
    invalid: t.exposeInt('invalid', { description: 'Entries that are not phone numbers.' }),
  }),
});

builder.mutationFields((t) => ({
  importContacts: t.field({
    type: ImportContactsResult,
    description: 'Creates a contact group from rows or a CSV file; nothing is written unless all of it is.',
    authScopes: { authenticated: true },
    extensions: rateLimit('import'),
    args: { input: t.arg({ type: ImportContactsInput, required: true }) },
    resolve: (_root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, async ({ file, ...input }) => {
        const upload = file as File | undefined;
        if (upload && upload.size === 0) throw ValidationError.field('file', 'The submitted file is empty.');
        return importContacts(ctx.service, { ...input, csv_text: upload ? await upload.text() : undefined });
      }),
  }),
  updateContactGroup: t.prismaField({
    type: 'ContactGroup',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: UpdateContactGroupInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => groups.updateGroup(ctx.service, args.id, input, query)),
  }),
  deleteContactGroup: t.field({
    type: ContactGroupDeletion,
    description:
      'Deletes the group and its contacts (each erased or deleted as by deleteContact), and its campaigns that never started; a group that started campaigns still name is archived instead. Refused (CONFLICT) while a campaign that may still dial uses it, or during a call to one of its contacts.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: async (_root, args, ctx) => ({ id: args.id, ...(await groups.deleteGroup(ctx.service, args.id)) }),
  }),
  upsertContact: t.prismaField({
    type: 'Contact',
    authScopes: { authenticated: true },
    args: { groupId: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: UpsertContactInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => contacts.upsertContactInGroup(ctx.service, args.groupId, input, query)),
  }),
  updateContact: t.prismaField({
    type: 'Contact',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: UpdateContactInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => contacts.updateContact(ctx.service, args.id, input, query)),
  }),
  deleteContact: t.field({
    type: Deleted,
    description:
      'Deletes a person: erased when campaigns called them or an appointment names them (their data is gone for good, the anonymous facts of their calls stay), else deleted. Refused (CONFLICT) during a call to them.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: async (_root, args, ctx) => ({ id: args.id, outcome: await contacts.deleteContact(ctx.service, args.id) }),
  }),
  addDoNotCall: t.prismaField({
    type: 'DoNotCallEntry',
    description: 'Puts a number on the do-not-call list; its contacts become do_not_call in every group.',
    authScopes: { authenticated: true },
    args: { input: t.arg({ type: AddDoNotCallInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, async (input) =>
        dnc.getDoNotCallEntry(ctx.service, (await dnc.addDoNotCall(ctx.service, input)).id, query),
      ),
  }),
  importDoNotCallList: t.field({
    type: DoNotCallListImport,
    description:
      'Puts the numbers of an outside do-not-call list (a national or state registry extract, a suppression file) on your list, source registry: no campaign of yours dials them from then on.',
    authScopes: { authenticated: true },
    extensions: rateLimit('import'),
    args: { input: t.arg({ type: ImportDoNotCallListInput, required: true }) },
    resolve: (_root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => dnc.importDoNotCallList(ctx.service, input)),
  }),
  reportOptOut: t.prismaField({
    type: 'DoNotCallEntry',
    description:
      'An opt-out said during one of your calls, reported by whoever heard it (your agent runtime, for a provider that reports none): the number goes on the do-not-call list at once and contact.opted_out is sent.',
    authScopes: { authenticated: true },
    args: { callAttemptId: t.arg({ type: 'UUID', required: true }) },
    resolve: async (query, _root, args, ctx) =>
      dnc.getDoNotCallEntry(ctx.service, (await dnc.reportOptOut(ctx.service, args.callAttemptId)).id, query),
  }),
  removeDoNotCall: t.field({
    type: DoNotCallEntry,
    description: 'Takes a number off the do-not-call list; its contacts become callable again.',
    authScopes: { authenticated: true },
    args: { phoneNumber: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => dnc.removeDoNotCall(ctx.service, { phone_number: args.phoneNumber }),
  }),
}));
