import * as exports from '../../services/exports/links.js';
import { builder } from '../builder.js';
import { withServiceInput } from '../service-input.js';
import { RECORD_RETENTION_YEARS } from '../../services/results/records.js';

const ExportKind = builder.enumType('ExportKind', {
  description: 'A CSV export, as its v1 endpoint answers `?format=csv`.',
  values: {
    call_history: { description: 'Every call attempt, newest first (GET /api/v1/campaigns/recordings/?format=csv).' },
    contact_outcomes: { description: "A campaign's contact outcomes (GET /api/v1/campaigns/{id}/report/?format=csv)." },
  },
});

const ExportLink = builder.objectRef<exports.ExportLink>('ExportLink').implement({
  description: `A download link to a CSV export, valid for ${exports.LINK_MINUTES} minutes. The link is the credential: whoever holds it may download the export, without a token, until it expires.`,
  fields: (t) => ({
    path: t.exposeString('path', { description: "Relative to the server's address, e.g. /exports/…/." }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
  }),
});

const ExportLinkInput = builder.inputType('ExportLinkInput', {
  fields: (t) => ({
    kind: t.field({ type: ExportKind, required: true }),
    campaignId: t.field({ type: 'UUID', description: 'Required for contact_outcomes.' }),
  }),
});

builder.queryFields((t) => ({
  exportLink: t.field({
    type: ExportLink,
    description: 'A short-lived signed link to download one of your exports as CSV, streamed whatever its size.',
    authScopes: { authenticated: true },
    args: { input: t.arg({ type: ExportLinkInput, required: true }) },
    resolve: (_root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => exports.createExportLink(ctx.service, input)),
  }),
}));

const CallRecordsExportInput = builder.inputType('CallRecordsExportInput', {
  fields: (t) => ({
    from: t.field({ type: 'DateTime', required: true, description: 'Calls placed at or after this time.' }),
    to: t.field({ type: 'DateTime', required: true, description: 'Calls placed before this time.' }),
    phoneNumber: t.string({
      description: "Only the calls to this number, including those whose person was erased (matched by the number's pseudonym).",
    }),
  }),
});

builder.mutationFields((t) => ({
  exportCallRecords: t.field({
    type: ExportLink,
    description: `A signed link to your call records placed in [from, to) as CSV: the evidence the Telemarketing Sales Rule asks a seller to keep for ${RECORD_RETENTION_YEARS} years (numbers, times, duration, disposition, caller ID, consents relied on, calling-rules version; docs/compliance-rules.md).`,
    authScopes: { authenticated: true },
    args: { input: t.arg({ type: CallRecordsExportInput, required: true }) },
    resolve: (_root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => exports.createCallRecordsLink(ctx.service, input)),
  }),
}));
