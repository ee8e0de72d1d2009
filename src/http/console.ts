import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { Hono } from 'hono';
import { projectRoot } from '../db/paths.js';
import type { TrustedDocuments } from '../schema/server/trusted-documents.js';
import { json } from './errors.js';

// The web console (console/), built by `npm install` into console/dist and served here as static files.
// It speaks only the public GraphQL API, like any other client; the server tells it whether that API runs
// trusted documents only, so it sends its documents' hashes instead of their text.

export const CONSOLE_PATH = '/console/';
const DIST = join(projectRoot, 'console', 'dist');
const MANIFEST = 'persisted-documents.json';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

// Charts set inline styles; everything else comes from this origin.
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export interface ConsoleOptions {
  trustedDocuments: boolean;
  /** The token the login form offers (development's demo token). */
  demoToken?: string | undefined;
}

function notBuilt(): Error {
  return new Error('The console is not built (console/dist is missing): run `npm run console:build`, or set CONSOLE=false.');
}

/** The console's operations by hash, to add to the trusted documents of a server that serves it. */
export function consoleDocuments(): TrustedDocuments {
  const path = join(DIST, MANIFEST);
  if (!existsSync(path)) throw notBuilt();
  return new Map(Object.entries(JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>));
}

/** GET /console/ and its files; /console/config.json tells the page how to call the API. */
export function consoleRoutes(options: ConsoleOptions): Hono {
  const routes = new Hono({ strict: true });
  routes.get('/console', (c) => c.redirect(CONSOLE_PATH, 308));
  routes.get(`${CONSOLE_PATH}config.json`, (c) =>
    c.json({ trustedDocuments: options.trustedDocuments, demoToken: options.demoToken ?? null }, 200, { 'cache-control': 'no-store' }),
  );
  routes.get(`${CONSOLE_PATH}*`, async (c) => {
    const name = c.req.path.slice(CONSOLE_PATH.length) || 'index.html';
    const path = normalize(join(DIST, name));
    const type = TYPES[extname(path)];
    if (!path.startsWith(DIST + sep) || !type || name === MANIFEST) return json(404, { detail: 'Not found.' });
    let body: Buffer;
    try {
      body = await readFile(path);
    } catch {
      if (!existsSync(DIST)) return json(503, { detail: notBuilt().message });
      return json(404, { detail: 'Not found.' });
    }
    // Vite names the built assets by their content: a new build has new names, so they never go stale.
    const cache = name.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
    return c.body(new Uint8Array(body), 200, { 'content-type': type, 'cache-control': cache, ...PAGE_HEADERS });
  });
  return routes;
}
