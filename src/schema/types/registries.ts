import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { DoNotCallRegistry } from '../../generated/prisma/enums.js';
import { importRegistryAsAdmin, listRegistries, type RegistryStatus } from '../../services/registries/registries.js';
import { ValidationError } from '../../services/errors.js';
import { builder } from '../builder.js';
import { withServiceInput } from '../service-input.js';

// The national do-not-call registries: shared reference data an administrator loads and watches.

const RegistryEnum = builder.enumType(DoNotCallRegistry, {
  name: 'DoNotCallRegistry',
  description: 'A national do-not-call registry: the US National DNC, Canada’s National DNCL, the UK TPS or CTPS.',
});

const RegistryCopy = builder.objectRef<RegistryStatus>('DoNotCallRegistryCopy').implement({
  description: 'A registry’s copy in force: the import that loaded it, and its age.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    registry: t.expose('registry', { type: RegistryEnum }),
    label: t.exposeString('label'),
    downloadedOn: t.string({
      description: 'The day the file was downloaded from the registry (YYYY-MM-DD).',
      resolve: (c) => c.downloadedOn.toISOString().slice(0, 10),
    }),
    numbers: t.expose('numbers', { type: 'BigInt', description: 'Numbers on the copy.' }),
    areaCodes: t.exposeStringList('areaCodes', { description: 'The area codes (NANP) or leading digits (UK) the file held.' }),
    importedBy: t.exposeString('importedBy'),
    importedAt: t.expose('importedAt', { type: 'DateTime' }),
    ageDays: t.exposeInt('ageDays', { description: 'Whole days since the download.' }),
    maxAgeDays: t.exposeInt('maxAgeDays', { description: 'The oldest a copy may be for solicitation to go on.' }),
    stale: t.exposeBoolean('stale', { description: 'Too old: solicitation campaigns are stopped until a fresh copy is imported.' }),
  }),
});

const ImportRegistryInput = builder.inputType('ImportDoNotCallRegistryInput', {
  fields: (t) => ({
    registry: t.field({ type: RegistryEnum, required: true }),
    downloadedOn: t.string({ required: true, description: 'The day the file was downloaded from the registry (YYYY-MM-DD).' }),
    file: t.field({
      type: 'File',
      required: true,
      description:
        'The registry’s download file: one number a line (see docs/compliance-rules.md). Files of millions of lines: `npm run registry:import`.',
    }),
  }),
});

builder.queryFields((t) => ({
  doNotCallRegistries: t.field({
    type: [RegistryCopy],
    description: 'Administrators: each national registry’s copy in force, with its age.',
    authScopes: { admin: true },
    resolve: (_root, _args, ctx) => listRegistries(ctx.service),
  }),
}));

builder.mutationFields((t) => ({
  importDoNotCallRegistry: t.field({
    type: RegistryCopy,
    description:
      'Administrators: replaces a national registry’s copy with a download file, whole and at once (lookups see the old copy or the new one). A line that is not a number of the registry changes nothing and is named with its line number.',
    authScopes: { admin: true },
    args: { input: t.arg({ type: ImportRegistryInput, required: true }) },
    resolve: (_root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, async ({ file, ...input }) => {
        const upload = file as File;
        if (upload.size === 0) throw ValidationError.field('file', 'The submitted file is empty.');
        await importRegistryAsAdmin(ctx.service, input, Readable.fromWeb(upload.stream() as NodeReadableStream<Uint8Array>));
        return (await listRegistries(ctx.service)).find((copy) => copy.registry === args.input.registry)!;
      }),
  }),
}));
