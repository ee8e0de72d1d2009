import type { PGlite, PGliteOptions } from '@electric-sql/pglite';

// PGlite starts PostgreSQL with its default 128 MB of shared buffers, and Emscripten's mmap zeroes that
// memory byte by byte in WebAssembly at every open: 0.4 s of CPU, a third of a later `npm start` on the
// embedded database. The embedded database has one session, and its files are in the OS's page cache (a
// data folder) or in memory already (the tests'), so 16 MB is cache enough. Every embedded database
// the service, its tools and its tests open takes these options.

/** PostgreSQL's shared buffers in an embedded database. */
export const EMBEDDED_SHARED_BUFFERS = '16MB';

/** Options for `new PGlite(...)`: PGlite's own start parameters, with the settings above. */
export function embeddedOptions(pglite: typeof PGlite, options: PGliteOptions = {}): PGliteOptions {
  return { ...options, startParams: [...pglite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`] };
}
