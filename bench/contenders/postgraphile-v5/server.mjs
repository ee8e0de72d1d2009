import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import process from 'node:process';
import { URL } from 'node:url';
import pg from 'pg';
import { postgraphile } from 'postgraphile';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { listenUntilTerm } from '../listen.ts';

// PostGraphile v5 (Grafast) as a contender for the nested GraphQL read: the amber preset served by grafserv
// on node:http, in a process of its own, with a pool of 20 and what a production deployment would switch
// off (GraphiQL, schema watching, plan explanations). It needs Node 22, so it lives in a package of its own
// whose dependencies bring a Node 22 binary from the npm registry; bench/load.ts installs it and runs this
// file with that binary (which strips listen.ts's types itself). Env: DATABASE_URL. Prints
// `listening on <url>` once its schema is built.

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
// The computed columns the nested query reads, shared with the v4 contender.
await pool.query(readFileSync(new URL('../computed-columns.sql', import.meta.url), 'utf8'));

const preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [makePgService({ pool, schemas: ['public'] })],
  grafast: { explain: false },
  grafserv: { graphiql: false, watch: false, maxRequestLength: 1_000_000 },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
await pgl.getSchema();

const server = createServer();
serv.addTo(server);
listenUntilTerm(server, async () => {
  await pgl.release();
  await pool.end();
});
