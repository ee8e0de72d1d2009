import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { openEmbedded } from '../src/db/embedded.js';
import { EMBEDDED_SHARED_BUFFERS } from '../src/db/embedded-settings.js';

// PostgreSQL's default 128 MB of shared buffers cost an embedded database 0.4 s of CPU at every open
// (WebAssembly zeroes them): a data folder opens with the embedded settings.
it('opens a data folder with the embedded shared buffers, not PostgreSQL’s default', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'callflow-embedded-'));
  try {
    const embedded = await openEmbedded(join(dir, 'data'));
    try {
      const { rows } = await embedded.pglite.query<{ shared_buffers: string }>('SHOW shared_buffers');
      expect(rows[0]!.shared_buffers).toBe(EMBEDDED_SHARED_BUFFERS);
    } finally {
      await embedded.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
