import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

// graphql must be one copy: Node loads its CommonJS build for our dependencies, so our own files, which
// vitest transforms, are pointed at that same build instead of the ESM one.
const graphqlEntry = createRequire(import.meta.url).resolve('graphql');

// Files that read or set process-wide state (the metrics registry, the global tracer, environment
// variables) each get a fresh process. Every other file shares its worker's loaded modules with the files
// that ran there before it: each still has its own database and app, and loading the app's modules once
// per worker instead of once per file is most of what the suite spent.
const ISOLATED = ['test/metrics.test.ts', 'test/tracing.test.ts'];

// The projects do not extend the root config, so that its global setup (the migrated template) runs once.
const project = (name: string, test: { include: string[]; exclude?: string[]; isolate: boolean }) => ({
  resolve: { alias: { graphql: graphqlEntry } },
  test: { name, testTimeout: 30_000, hookTimeout: 120_000, ...test },
});

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default'],
    // Most files wait on timers, sockets and the database much of the time, so more files than cores run at once.
    maxWorkers: 4,
    projects: [
      project('isolated', { include: ISOLATED, isolate: true }),
      project('shared', { include: ['test/**/*.test.ts'], exclude: ISOLATED, isolate: false }),
    ],
  },
});
