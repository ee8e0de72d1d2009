import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { GraphiQLOptions } from 'graphql-yoga';
import { projectRoot } from '../../db/paths.js';
import { json } from '../../http/errors.js';
import { chooseEncoding, type Encoding } from '../../http/compression.js';

// GraphiQL without a CDN, as a small page and its assets: Yoga's own renderer inlines 9 MB of script and
// style into the page, sent again on every visit. Here the page links its assets under a path that holds
// their content hash, so a browser keeps them for a year and a new version has a new path. Compressing
// them takes a second and a half of CPU (brotli at quality 9), so `npm install` does it once, into
// .run/graphiql/<version>/ (prepare-graphiql.ts); an asset found nowhere there is compressed when first
// asked for and kept. Nothing is loaded until GraphiQL is visited.

export const GRAPHIQL_ASSETS_PATH = '/graphql/assets/';

interface Asset {
  type: string;
  body: Buffer;
  encoded: Partial<Record<Encoding, Promise<Buffer>>>;
}

interface Assets {
  version: string;
  files: Map<string, Asset>;
}

let loading: Promise<Assets> | undefined;

/** The parts of Yoga's GraphiQL build, kept in one module of its package that its exports do not list. */
function loadAssets(): Promise<Assets> {
  loading ??= (async () => {
    const entry = createRequire(import.meta.url).resolve('@graphql-yoga/render-graphiql');
    const parts = (await import(pathToFileURL(join(dirname(entry), '../esm/graphiql.js')).href)) as Record<
      'css' | 'js' | 'editorWorkerService' | 'jsonWorker' | 'graphqlWorker' | 'favicon',
      string
    >;
    const icon = /^data:([^;]+);base64,(.*)$/.exec(parts.favicon);
    const files = new Map<string, Asset>();
    const add = (name: string, type: string, body: Buffer) => files.set(name, { type, body, encoded: {} });
    add('graphiql.css', 'text/css; charset=utf-8', Buffer.from(parts.css));
    add('graphiql.js', 'text/javascript; charset=utf-8', Buffer.from(parts.js));
    add('editorWorkerService.js', 'text/javascript; charset=utf-8', Buffer.from(parts.editorWorkerService));
    add('json.js', 'text/javascript; charset=utf-8', Buffer.from(parts.jsonWorker));
    add('graphql.js', 'text/javascript; charset=utf-8', Buffer.from(parts.graphqlWorker));
    if (icon) add('favicon.ico', icon[1]!, Buffer.from(icon[2]!, 'base64'));
    const hash = createHash('sha256');
    for (const [name, file] of files) hash.update(name).update(file.body);
    return { version: hash.digest('hex').slice(0, 16), files };
  })();
  return loading;
}

const PRECOMPRESSED = join(projectRoot, '.run', 'graphiql');
const ENCODINGS = ['br', 'gzip'] as const satisfies readonly Encoding[];

const compressWith = {
  br: (body: Buffer) =>
    promisify(brotliCompress)(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
  gzip: (body: Buffer) => promisify(gzip)(body, { level: 9 }),
};

/** The buffer's bytes as a Response body, without a copy. */
const view = (buffer: Buffer) => new Uint8Array(buffer.buffer as ArrayBuffer, buffer.byteOffset, buffer.byteLength);

const escapeScript = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/**
 * After a request that succeeded, a schema GraphiQL could not fetch (no token yet) is fetched again: a
 * person who pastes a token and runs a query gets the docs without finding the button that does it.
 */
const REFETCH_SCHEMA = `
  let schemaFailed = false;
  const send = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const response = await send(input, init);
    const introspection = typeof init?.body === 'string' && init.body.includes('__schema');
    if (introspection) schemaFailed = !response.ok;
    else if (schemaFailed && response.ok) {
      schemaFailed = false;
      document.querySelector('[aria-label^="Re-fetch GraphQL schema"]')?.click();
    }
    return response;
  };`;

/** The page: GraphiQL with `options`, its assets linked under their version. */
export async function graphiqlPage(options: GraphiQLOptions | undefined): Promise<string> {
  const { version, files } = await loadAssets();
  const base = `${GRAPHIQL_ASSETS_PATH}${version}/`;
  const workers = Object.fromEntries(['editorWorkerService', 'json', 'graphql'].map((name) => [name, `${base}${name}.js`]));
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${(options?.title ?? 'GraphiQL').replace(/[<&]/g, '')}</title>
    ${files.has('favicon.ico') ? `<link rel="icon" href="${base}favicon.ico" />` : ''}
    <link rel="stylesheet" href="${base}graphiql.css" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <div id="root"></div>
    <script>
      const workers = ${escapeScript(workers)};
      self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (moduleId, label) => workers[label] };
      ${REFETCH_SCHEMA}
    </script>
    <script src="${base}graphiql.js"></script>
    <script>
      YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), ${escapeScript(options ?? {})});
    </script>
  </body>
</html>
`;
}

const FIRST_QUERY = `query FirstLook {
  campaigns(first: 5) {
    edges { node { id name status callingBeginsAt } }
  }
  creditBalance { effectiveBalanceCents }
}
`;

/**
 * GraphiQL's options: with a token (development's demo token) it opens ready to run, the token in its
 * headers; without one, its first query says where the token goes.
 */
export function graphiqlOptions(token: string | undefined, additionalHeaders: Record<string, string>): GraphiQLOptions {
  const common = { title: 'Campaigns GraphQL', additionalHeaders, defaultEditorToolsVisibility: 'headers' as const };
  if (token) {
    return {
      ...common,
      headers: JSON.stringify({ Authorization: `Bearer ${token}` }, null, 2),
      defaultQuery: `# The demo user's token is in Headers below: run this with the ▶ button.\n${FIRST_QUERY}`,
    };
  }
  return {
    ...common,
    headers: JSON.stringify({ Authorization: 'Bearer <token>' }, null, 2),
    defaultQuery:
      '# Every request needs a token: put it in Headers below in place of <token>\n' +
      '# (npm run token -- --sub <user id> makes one), then run this with the ▶ button.\n' +
      FIRST_QUERY,
  };
}

/** GET /graphql/assets/<version>/<file>: cached for a year; only the current version is served. */
export async function graphiqlAsset(version: string, name: string, acceptEncoding: string | undefined): Promise<Response> {
  const assets = await loadAssets();
  const asset = assets.files.get(name);
  if (!asset || version !== assets.version) return json(404, { detail: 'Not found.' });
  const headers: Record<string, string> = {
    'content-type': asset.type,
    'cache-control': 'public, max-age=31536000, immutable',
    vary: 'Accept-Encoding',
  };
  const encoding = asset.type.startsWith('image/') ? null : chooseEncoding(acceptEncoding);
  if (!encoding) return new Response(view(asset.body), { headers });
  const body = await (asset.encoded[encoding] ??= readFile(join(PRECOMPRESSED, version, `${name}.${encoding}`)).catch(() =>
    compressWith[encoding](asset.body),
  ));
  return new Response(view(body), { headers: { ...headers, 'content-encoding': encoding } });
}

/**
 * Writes every asset of the current GraphiQL build, compressed each way, into its version's folder (the
 * folders of other versions go); returns the folder. Each file is written aside and then moved in, so
 * a server never reads half of one.
 */
export async function precompressGraphiqlAssets(): Promise<string> {
  const { version, files } = await loadAssets();
  const dir = join(PRECOMPRESSED, version);
  await rm(PRECOMPRESSED, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const [name, asset] of files) {
    if (asset.type.startsWith('image/')) continue;
    for (const encoding of ENCODINGS) {
      const file = join(dir, `${name}.${encoding}`);
      await writeFile(`${file}.${process.pid}`, await compressWith[encoding](asset.body));
      await rename(`${file}.${process.pid}`, file);
    }
  }
  return dir;
}
