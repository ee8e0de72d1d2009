import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

// graphql must be one copy: Node loads its CommonJS build for our dependencies, so our own files, which
// vitest transforms, are pointed at that same build instead of the ESM one.
const graphqlEntry = createRequire(import.meta.url).resolve('graphql');

export default defineConfig({
  resolve: { alias: { graphql: graphqlEntry } },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
