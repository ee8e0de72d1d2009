import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed clients are generated from the published schema.graphql, never from a running server.
// Consumers copy this shape: point `documents` at their own operations and `generates` at their tree.
// Here it types the operations under test/codegen, which the test suite runs against the real schema.
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/codegen/**/*.ts'],
  ignoreNoDocuments: false,
  emitLegacyCommonJSImports: false,
  generates: {
    'test/generated/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        strictScalars: true,
        scalars: { UUID: 'string', DateTime: 'string', JSON: 'unknown', BigInt: 'number', File: 'File' },
      },
    },
  },
};

export default config;
