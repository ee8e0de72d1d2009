import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import pg from 'pg';
import { listenUntilTerm } from './listen.js';

// PostGraphile v4 as a contender for the nested GraphQL read: its own process (run by bench/load.ts with
// `node --import tsx`, NODE_ENV=production), on the bench database's `public` schema, with the options
// a production deployment would use (no GraphiQL, no schema watching, no query log) and a pool of 20.
// Env: DATABASE_URL. Prints `listening on <url>` once its schema is built.

// PostGraphile v4 needs graphql 15 and the project has 16, so npm gives graphile-build-pg and
// graphql-parse-resolve-info copies (or the root's 16) of their own; types built by one copy then fail the
// other's checks ("Unexpected input type"). In this process, every `graphql` and `graphile-build` is
// PostGraphile's own.
const anchor = createRequire(import.meta.url).resolve('postgraphile');
const modules = Module as unknown as {
  _resolveFilename: (request: string, parent: unknown, ...rest: unknown[]) => string;
  _nodeModulePaths: (dir: string) => string[];
};
const postgraphileModule = { id: anchor, filename: anchor, paths: modules._nodeModulePaths(dirname(anchor)) };
const SHARED = new Set(['graphql', 'graphile-build']);
const resolveFilename = modules._resolveFilename;
modules._resolveFilename = function (request, parent, ...rest) {
  return resolveFilename.call(this, request, SHARED.has(request.split('/')[0]!) ? postgraphileModule : parent, ...rest);
};
const { postgraphile } = await import('postgraphile');

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
// The computed columns the nested query reads (computed-columns.sql).
await pool.query(readFileSync(new URL('computed-columns.sql', import.meta.url), 'utf8'));

const handler = postgraphile(pool, 'public', {
  graphiql: false,
  watchPg: false,
  disableQueryLog: true,
  retryOnInitFail: false,
  // Our functions never return null rows: spares the nullable edges.
  setofFunctionsContainNulls: false,
});
await handler.getGraphQLSchema();

const server = createServer(handler);
listenUntilTerm(server, () => pool.end());
