import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

// The console is served by the service at /console/ from console/dist. Its trusted-documents manifest
// (written by `npm run codegen`) is shipped beside it, so that a server running trusted documents only
// also runs the console's operations.
const manifest = fileURLToPath(new URL('src/gql/persisted-documents.json', import.meta.url));

const shipManifest = (): Plugin => ({
  name: 'ship-persisted-documents',
  generateBundle() {
    this.emitFile({ type: 'asset', fileName: 'persisted-documents.json', source: readFileSync(manifest, 'utf8') });
  },
});

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [react(), shipManifest()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 1024 },
  logLevel: 'warn',
});
