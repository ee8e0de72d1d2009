import { ConsentKind, DialBlockReason } from '../../generated/prisma/enums.js';
import * as consents from '../../services/contacts/consents.js';
import { calleeRegion, placeOfNumber } from '../../services/calling-rules/places.js';
import { readData } from '../../services/contacts/fields.js';
import { builder } from '../builder.js';
import { withServiceInput } from '../service-input.js';

// Consents, and the calls compliance rules stopped, on the contacts and campaigns they belong to.

export const ConsentKindEnum = builder.enumType(ConsentKind, { name: 'ConsentKind', description: 'What a consent covers.' });

const DialBlockReasonEnum = builder.enumType(DialBlockReason, {
  name: 'DialBlockReason',
  description:
    'Why a call was not placed: the number is on a do-not-call list or (for solicitation) a national registry, a consent the campaign requires is missing, or the regional rules of the callee’s place bar calls at that hour, on that day or on that holiday.',
});

builder.prismaObject('ContactConsent', {
  description: 'A consent a contact gave. Revoked, it stays as history and no longer counts.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    kind: t.expose('kind', { type: ConsentKindEnum }),
    source: t.exposeString('source'),
    obtainedAt: t.expose('obtainedAt', { type: 'DateTime' }),
    proof: t.exposeString('proof', { nullable: true, description: 'The consent text, or a link to where it is kept.' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    contact: t.relation('contact'),
  }),
});

builder.prismaObject('DialBlock', {
  description: 'A call the dialer did not place because a compliance rule stopped it.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    reason: t.expose('reason', { type: DialBlockReasonEnum }),
    detail: t.exposeString('detail', {
      description: 'The region whose rule applied, the consents missing (comma-separated), or the national registry the number is on.',
    }),
    until: t.expose('until', { type: 'DateTime', nullable: true, description: 'When the contact is due again; null when it is done.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the dialer would have called.' }),
    contact: t.relation('contact'),
    campaign: t.relation('campaign'),
  }),
});

const NEWEST_FIRST = { orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }] };

builder.prismaObjectFields('Contact', (t) => ({
  region: t.string({
    nullable: true,
    description: 'The ISO 3166-2 region whose calling rules apply, when the contact names one (a `region` column); else the number’s.',
    // Computed from the area-code table, which SQL does not hold: queries selecting it run through the resolvers.
    select: { data: true, phoneNumber: true },
    resolve: (c) => calleeRegion(readData(c.data).region, c.phoneNumber ? placeOfNumber(c.phoneNumber) : null),
  }),
  consents: t.relation('consents', { query: NEWEST_FIRST }),
  dialBlocks: t.relatedConnection('dialBlocks', {
    cursor: 'id',
    query: NEWEST_FIRST,
    description: 'Calls to this contact rules stopped, newest first.',
  }),
}));

builder.prismaObjectFields('Campaign', (t) => ({
  dialBlocks: t.relatedConnection('dialBlocks', {
    cursor: 'id',
    args: { contactId: t.arg({ type: 'UUID' }) },
    query: (args) => ({ ...NEWEST_FIRST, where: args.contactId ? { contactId: args.contactId } : {} }),
    description: 'Calls of this campaign rules stopped, newest first; with contactId, one contact’s.',
  }),
}));

const RecordConsentInput = builder.inputType('RecordConsentInput', {
  fields: (t) => ({
    contactId: t.field({ type: 'UUID', required: true }),
    kind: t.field({ type: ConsentKindEnum, required: true }),
    source: t.string({ required: true, description: 'Where it was given (1 to 200 characters).' }),
    obtainedAt: t.field({ type: 'DateTime', required: true, description: 'When it was given; not in the future.' }),
    proof: t.string({ description: 'The consent text, or a link to where it is kept (at most 2000 characters).' }),
  }),
});

builder.mutationFields((t) => ({
  recordConsent: t.prismaField({
    type: 'ContactConsent',
    description: 'Records a consent a contact gave.',
    authScopes: { authenticated: true },
    args: { input: t.arg({ type: RecordConsentInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => consents.recordConsent(ctx.service, input, query)),
  }),
  revokeConsent: t.prismaField({
    type: 'ContactConsent',
    description: 'Revokes a consent: it stays as history and no longer counts from now on.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => consents.revokeConsent(ctx.service, args.id, query),
  }),
}));
