import type { ClientPresetConfig } from '@graphql-codegen/client-preset';

// The piece of a graphql-codegen config a client of this API needs beside its own documents: the
// TypeScript type of each custom scalar of schema.graphql as it travels in JSON. Without it the client
// preset types every custom scalar as `unknown`. This repository's codegen.ts uses it too; a test fails
// when schema.graphql gains a scalar this map does not name.

/** Each custom scalar of schema.graphql, as the client sends it (input) and reads it (output). */
export const scalars = {
  UUID: 'string',
  // ISO 8601 text, like 2026-01-31T09:00:00.000Z.
  DateTime: 'string',
  JSON: 'unknown',
  // Money in cents and other counts: plain JSON numbers (within 2^53 - 1); a digit string is taken too.
  BigInt: { input: 'number | string', output: 'number' },
  // Only ever an input: a multipart upload.
  File: { input: 'File | Blob', output: 'never' },
} as const;

/** Spread into one entry of a config's `generates` (the folder the typed client is written to). */
export const clientPresetConfig = {
  preset: 'client',
  presetConfig: { fragmentMasking: false } satisfies ClientPresetConfig,
  config: {
    scalars,
    // A scalar missing from the map fails the generation instead of becoming `any`.
    strictScalars: true,
    enumsAsTypes: true,
    useTypeImports: true,
  },
} as const;
