import type { IncomingMessage, ServerResponse } from 'node:http';
import { logAccess } from '../http/access-log.js';
import { inFetchOrder } from '../http/fetch-header-order.js';
import { jsonBody } from '../http/json-text.js';
import { compressAnswer } from '../http/compression.js';
import { corsAnswerHeaders, type CorsOrigins } from '../http/cors.js';
import { REQUEST_ID_HEADER, newRequestScope, type RequestScope } from '../http/request-scope.js';
import { countRequest } from '../http/request-metrics.js';
import { v1LeanLane as laneAnswers } from '../ops/metrics.js';
import type { RouteDefinition } from './route.js';
import { v1Routes } from './routes/index.js';
import { admit, paramCount, parseInput, routeErrorResponse, toHonoPath, V1_PREFIX, type RestDeps } from './router.js';

// A v1 GET of JSON (the lists and single reads legacy clients poll) is answered here, straight from
// node:http: through the router's own steps in the router's order (admit, parseInput, the handler, its
// error answers), with the headers the full path writes. Hono's routing and the Fetch API's Request and
// Response cost as much as the rest of a small read. Anything else goes on to the full path untouched:
// other methods, a body, a query or path with escapes (whose decoding is Hono's), a CSV export, a path
// no GET route matches.

export interface V1LeanLaneDeps extends RestDeps {
  corsOrigins: CorsOrigins;
}

type Listener = (incoming: IncomingMessage, outgoing: ServerResponse) => void;

interface Match {
  route: RouteDefinition;
  /** The route's path as Hono names it: the metrics' route label. */
  label: string;
  names: string[];
  pattern: RegExp;
}

// Paths and queries of these characters read the same whatever decodes them.
const PLAIN_PATH = /^\/api\/v1\/[A-Za-z0-9/_-]*\/$/;
const PLAIN_QUERY = /^[A-Za-z0-9_.=&-]*$/;

/** The GET routes answering JSON with 200, in the order the router tries them: static paths first. */
function matchesOf(routes: RouteDefinition[]): Match[] {
  return [...routes]
    .sort((a, b) => paramCount(a.path) - paramCount(b.path))
    .filter((route) => route.method === 'GET' && route.status === 200 && route.response !== undefined && !route.body)
    .map((route) => {
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      const source = (V1_PREFIX + route.path).replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}/g, '([^/]+)');
      return { route, label: toHonoPath(route.path), names, pattern: new RegExp(`^${source}$`) };
    });
}

/** The route a request's path names (the first that matches, as the router finds it) and its parameters. */
function find(matches: Match[], path: string): { match: Match; rawParams: Record<string, string> } | undefined {
  for (const match of matches) {
    const found = match.pattern.exec(path);
    if (!found) continue;
    const rawParams: Record<string, string> = {};
    match.names.forEach((name, i) => (rawParams[name] = found[i + 1]!));
    return { match, rawParams };
  }
  return undefined;
}

/** Whether a request may be one the lane answers, from its head alone. */
function mayTake(incoming: IncomingMessage): boolean {
  const { headers } = incoming;
  return (
    incoming.method === 'GET' &&
    headers['transfer-encoding'] === undefined &&
    (headers['content-length'] === undefined || headers['content-length'] === '0')
  );
}

/** The request handler of the HTTP server: the v1 lean lane in front of `next`. */
export function v1LeanLane(deps: V1LeanLaneDeps, next: Listener): Listener {
  const matches = matchesOf(deps.routes ?? v1Routes);
  return (incoming, outgoing) => {
    if (!mayTake(incoming)) return next(incoming, outgoing);
    const url = incoming.url ?? '';
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const search = mark < 0 ? '' : url.slice(mark + 1);
    if (!PLAIN_PATH.test(path) || !PLAIN_QUERY.test(search)) return next(incoming, outgoing);
    const rawQuery = queryOf(search);
    const found = rawQuery && find(matches, path);
    if (!rawQuery || !found || (found.match.route.csv && rawQuery.format === 'csv')) return next(incoming, outgoing);
    const started = performance.now();
    const scope = newRequestScope(incoming.headers[REQUEST_ID_HEADER.toLowerCase()] as string | undefined, deps.env.log);
    answer(deps, found.match.route, found.rawParams, rawQuery, incoming, scope).then(
      ({ status, headers, body }) => {
        write(deps, incoming, outgoing, scope, status, headers, body);
        countRequest('GET', found.match.label, status, started);
        logAccess(deps.env.log, scope, 'GET', path, status, started);
      },
      () => outgoing.destroy(),
    );
  };
}

/**
 * The first value of each name, as the router reads a query (`c.req.queries()`, then each first value);
 * null for a nameless value, left to the router.
 */
function queryOf(search: string): Record<string, string> | null {
  const query: Record<string, string> = {};
  if (search === '') return query;
  for (const part of search.split('&')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    const name = equals < 0 ? part : part.slice(0, equals);
    if (name === '') return null;
    if (!(name in query)) query[name] = equals < 0 ? '' : part.slice(equals + 1);
  }
  return query;
}

interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

const JSON_HEADERS: [string, string][] = [['content-type', 'application/json']];

/** The route's answer, as the router gives it for a request without a body. */
async function answer(
  deps: V1LeanLaneDeps,
  route: RouteDefinition,
  rawParams: Record<string, string>,
  rawQuery: Record<string, string>,
  incoming: IncomingMessage,
  scope: RequestScope,
): Promise<Answer> {
  try {
    const ctx = await admit(route, deps, rawParams, incoming.headers.authorization, scope);
    const result = await route.handler(parseInput(route, rawParams, rawQuery, {}), ctx);
    laneAnswers.inc();
    return { status: route.status, headers: JSON_HEADERS, body: jsonBody(result) };
  } catch (error) {
    laneAnswers.inc();
    const response = routeErrorResponse(route, error, scope);
    return { status: response.status, headers: [...response.headers], body: await response.text() };
  }
}

/**
 * Writes an answer with the headers the full path adds (CORS, request id, compression), as node-server
 * writes a Fetch Response: its headers lower case and sorted, then the length of a text, or none (chunked)
 * for a compressed stream.
 */
function write(
  deps: V1LeanLaneDeps,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  scope: RequestScope,
  status: number,
  headers: [string, string][],
  body: string,
): void {
  const out = new Map<string, string>(headers);
  for (const [name, value] of corsAnswerHeaders(deps.corsOrigins, incoming.headers.origin)) out.set(name.toLowerCase(), value);
  // v1's JSON answers declare no length to the compression middleware, which then compresses any size.
  const compressed = compressAnswer(incoming.headers['accept-encoding'], out.get('content-type') ?? '', out.get('vary'), body, null);
  if (compressed) out.set('vary', compressed.vary);
  if (compressed?.encoding) out.set('content-encoding', compressed.encoding);
  out.set(REQUEST_ID_HEADER.toLowerCase(), scope.requestId);
  const sorted = inFetchOrder(out);
  // A compressed answer goes as a stream, of no declared length; one only given a Vary is copied into a
  // new Response, whose length node-server then writes in lower case.
  if (compressed?.encoding) outgoing.writeHead(status, sorted);
  else if (compressed) outgoing.writeHead(status, { ...sorted, 'content-length': compressed.body.length });
  else outgoing.writeHead(status, { ...sorted, 'Content-Length': Buffer.byteLength(body) });
  outgoing.end(compressed ? compressed.body : body);
}
