import type { CodegenConfig } from '@graphql-codegen/cli';
import { clientPresetConfig } from './codegen/client-config.js';

// Typed clients are generated from the published schema.graphql, never from a running server.
// A consumer's config is this one with its own `documents` and output folder (README, "Generate a typed
// client"). Here it types the operations under test/codegen, which the test suite runs against the real
// schema, and the web console's (console/src), each with its trusted-documents manifest
// (persisted-documents.json) beside them.
const withManifest = {
  ...clientPresetConfig,
  presetConfig: { ...clientPresetConfig.presetConfig, persistedDocuments: true },
};

const config: CodegenConfig = {
  schema: 'schema.graphql',
  ignoreNoDocuments: false,
  emitLegacyCommonJSImports: false,
  generates: {
    'test/generated/gql/': { ...withManifest, documents: ['test/codegen/**/*.ts'] },
    'console/src/gql/': { ...withManifest, documents: ['console/src/**/*.{ts,tsx}', '!console/src/gql/**'] },
  },
};

export default config;
