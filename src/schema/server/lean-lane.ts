import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RateLimiter } from '../../ops/rate-limits.js';
import { graphqlLeanLane } from '../../ops/metrics.js';
import { countRequest } from '../../http/request-metrics.js';
import { inFetchOrder } from '../../http/fetch-header-order.js';
import { compressAnswer } from '../../http/compression.js';
import { corsAnswerHeaders, type CorsOrigins } from '../../http/cors.js';
import { logAccess } from '../../http/access-log.js';
import { handOverScope, newRequestScope, type RequestScope } from '../../http/request-scope.js';
import { IDEMPOTENCY_HEADER } from '../../services/idempotency/idempotency.js';
import type { Authenticator } from '../../services/auth.js';
import type { ServiceEnv } from '../../services/context.js';
import type { GraphQLContext } from '../context.js';
import { RateLimitedError } from '../../services/errors.js';
import { jsonTextTooDeep } from '../../services/input-safety.js';
import { planOperation } from '../compiled-reads/plan-operation.js';
import { readStatement, type ReadStatement } from '../../db/reads/run.js';
import { compiledData, compiledPath } from './compiled-reads.js';
import { MAX_COST, operationCost } from './cost.js';
import { valuesRefusal } from './input.js';
import { statementKey, type KnownRead, type KnownReads } from './known-reads.js';
import { graphqlContext } from './server.js';
import { documentIdOf, type TrustedDocuments } from './trusted-documents.js';
import { coerceVariables } from './variables.js';

// A POST to /graphql whose document the full path has already answered with a compiled read (see
// known-reads.ts) is answered here, straight from node:http: the same checks in the same order, each
// through the function the full path calls (authentication, input safety, variables, cost, budgets, the
// plan and its statement), and PostgreSQL's text written with one `res.end`, with the headers the full
// path writes. Hono, the Fetch API objects, Yoga and envelop cost several times what the statement's
// answer costs to write. Anything the lane cannot answer exactly as the full path would (a new document,
// a refusal, a statement that leaves the answer to the resolvers, an Idempotency-Key, a
// body of no declared length) goes on to the full path, with the body already read and what the lane has
// spent (the caller's budgets, the statement) handed over, so that nothing runs twice.

export interface LeanLaneDeps {
  env: ServiceEnv;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  corsOrigins: CorsOrigins;
  /** The full path's body limit on /graphql: a larger body goes there to be refused. */
  maxBodyBytes: number;
  trustedDocuments?: TrustedDocuments | undefined;
  knownReads: KnownReads;
}

type Listener = (incoming: IncomingMessage, outgoing: ServerResponse) => void;

const answered = graphqlLeanLane.labels('answered');
const handedOver = graphqlLeanLane.labels('handed_over');

/** A JSON body as the full path's media type check (media-types.ts) and its JSON parser see one. */
const isJson = (contentType: string | undefined) =>
  contentType !== undefined &&
  !contentType.includes(',') &&
  (contentType === 'application/json' || contentType.startsWith('application/json;'));

/** Whether a request may be one the lane answers, from its head alone. */
function mayTake(incoming: IncomingMessage, deps: LeanLaneDeps): boolean {
  const { headers } = incoming;
  const length = headers['content-length'];
  return (
    incoming.method === 'POST' &&
    incoming.url === '/graphql' &&
    deps.knownReads.size > 0 &&
    length !== undefined &&
    /^\d+$/.test(length) &&
    Number(length) <= deps.maxBodyBytes &&
    headers['transfer-encoding'] === undefined &&
    headers[IDEMPOTENCY_HEADER.toLowerCase()] === undefined &&
    isJson(headers['content-type'])
  );
}

/** The request handler of the HTTP server: the lean lane in front of the full path (`full`). */
export function leanLane(deps: LeanLaneDeps, full: Listener): Listener {
  const handOver = (incoming: IncomingMessage, outgoing: ServerResponse, body: Buffer, scope?: RequestScope) => {
    // node-server reads a body it is handed here instead of the socket's, which this lane has read.
    (incoming as IncomingMessage & { rawBody?: Buffer }).rawBody = body;
    if (outgoing.headersSent) return;
    if (scope) handOverScope(incoming, scope);
    handedOver.inc();
    full(incoming, outgoing);
  };
  return (incoming, outgoing) => {
    if (!mayTake(incoming, deps)) {
      full(incoming, outgoing);
      return;
    }
    const started = performance.now();
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('error', () => outgoing.destroy());
    incoming.on('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      let scope: RequestScope | undefined;
      answer(deps, incoming, outgoing, body, started, (given) => (scope = given)).then(
        (done) => {
          if (!done) handOver(incoming, outgoing, body, scope);
        },
        () => handOver(incoming, outgoing, body, scope),
      );
    });
  };
}

interface Params {
  query?: unknown;
  operationName?: unknown;
  variables?: unknown;
  extensions?: unknown;
  documentId?: unknown;
}

const PARAM_NAMES = new Set(['query', 'operationName', 'variables', 'extensions', 'documentId']);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The known read a request's parameters name, when they are all of a shape the full path takes as it is. */
function knownReadOf(params: unknown, deps: LeanLaneDeps): KnownRead | undefined {
  if (!isObject(params)) return undefined;
  for (const name in params) if (params[name] != null && !PARAM_NAMES.has(name)) return undefined;
  const { query, operationName, variables, extensions, documentId } = params as Params;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  if (variables != null && !isObject(variables)) return undefined;
  if (extensions != null && !isObject(extensions)) return undefined;
  if (!deps.trustedDocuments) {
    if (typeof query !== 'string' || extensions != null || documentId != null) return undefined;
    return deps.knownReads.find(query, operationName);
  }
  // Trusted documents: the document by its id, as the persisted operations plugin finds it.
  if (query != null) return undefined;
  const id = documentIdOf(params as Params as { extensions?: Record<string, unknown> });
  const text = id === null ? undefined : deps.trustedDocuments.get(id);
  return text === undefined ? undefined : deps.knownReads.find(text, operationName);
}

/**
 * Answers the request when it can (true), the full path's checks in the full path's order; false hands it
 * over. `keep` receives the scope once made, so that the full path carries on with it.
 */
async function answer(
  deps: LeanLaneDeps,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  body: Buffer,
  started: number,
  keep: (scope: RequestScope) => void,
): Promise<boolean> {
  const { headers } = incoming;
  const text = body.toString('utf8');
  if (jsonTextTooDeep(text)) return false;
  let params: Params;
  try {
    params = JSON.parse(text) as Params;
  } catch {
    return false;
  }
  const read = knownReadOf(params, deps);
  // A known read's text is one the full path accepted: only its values can be refused.
  if (!read || valuesRefusal(params)) return false;
  const mediaType = answerMediaType(headers.accept);
  if (!mediaType) return false;

  const scope = newRequestScope(headers['x-request-id'] as string | undefined, deps.env.log);
  keep(scope);
  const user = await deps.authenticator.authenticate(headers.authorization);
  const ctx = graphqlContext(deps.env, user, scope);
  const key = statementKey(read, user, JSON.stringify(params.variables ?? null));
  let statement = deps.knownReads.statement(key);
  if (!statement) {
    statement = prepare(read, params, ctx);
    if (!statement) return false;
    deps.knownReads.keepStatement(key, statement);
  }

  try {
    await deps.rateLimiter.consume(user.id, read.buckets);
    scope.spentBudgets = null;
  } catch (error) {
    if (!(error instanceof RateLimitedError)) throw error;
    scope.spentBudgets = error;
    return false;
  }
  const timed = read.timer.startTimer();
  const data = await compiledData(ctx, statement);
  if (data === null) {
    scope.compiledReadDeclined = true;
    return false;
  }
  timed();
  read.succeeded.inc();
  compiledPath.inc();
  answered.inc();

  const answerBody = `{"data":${data}}`;
  // As node-server writes the full path's headers: a Fetch Headers' names, lower case and sorted.
  const out = new Map<string, string>();
  for (const [name, value] of corsAnswerHeaders(deps.corsOrigins, headers.origin)) out.set(name.toLowerCase(), value);
  const length = Buffer.byteLength(answerBody);
  out.set('content-length', String(length));
  out.set('content-type', `${mediaType}; charset=utf-8`);
  const compressed = compressAnswer(headers['accept-encoding'], out.get('content-type')!, out.get('vary'), answerBody, length);
  if (compressed) out.set('vary', compressed.vary);
  // A compressed answer goes as a stream, of no declared length.
  if (compressed?.encoding) {
    out.delete('content-length');
    out.set('content-encoding', compressed.encoding);
  }
  out.set('x-request-id', scope.requestId);
  outgoing.writeHead(200, inFetchOrder(out));
  outgoing.end(compressed ? compressed.body : answerBody);

  countRequest('POST', '/graphql', 200, started);
  logAccess(deps.env.log, scope, 'POST', '/graphql', 200, started);
  return true;
}

/**
 * The statement of a request whose variables coerce, within the cost limit, with a plan that compiles;
 * undefined hands the request over, for the full path to refuse it or answer it with the resolvers.
 */
function prepare(read: KnownRead, params: Params, ctx: GraphQLContext): ReadStatement | undefined {
  const variables = params.variables as Record<string, unknown> | null | undefined;
  const { coerced } = coerceVariables(read.schema, read.document, read.operationName, variables);
  if (!coerced) return undefined;
  const cost = operationCost(read.schema, read.document, read.operationName, coerced);
  if (!cost || cost.values > MAX_COST) return undefined;
  const plan = planOperation(read.schema, read.document, read.operationName, coerced, ctx);
  if (!plan) return undefined;
  try {
    return readStatement(plan);
  } catch {
    // Unsupported (or a surprise): the full path finds it again and answers with the resolvers.
    return undefined;
  }
}

// Yoga's choice of how to write a result (plugins/use-result-processor.js) for one that is not a stream:
// over its processors in order and the accepted types last to first, the last match wins. Only its
// regular processor's answers are written here.
const PROCESSORS: [regular: boolean, types: string[]][] = [
  [false, ['text/event-stream']],
  [false, ['multipart/mixed']],
  [true, ['application/graphql-response+json', 'application/json']],
];
const mediaTypes = new Map<string, string | null>();

/** The media type the full path answers a request accepting `accept` with, or null when not a regular one. */
export function answerMediaType(accept: string | undefined): string | null {
  const header = accept || '*/*';
  let chosen = mediaTypes.get(header);
  if (chosen !== undefined) return chosen;
  chosen = null;
  const asked = header
    .replace(/\s/g, '')
    .toLowerCase()
    .split(',')
    .filter(
      (part) =>
        (part
          .split(';')
          .slice(1)
          .find((p) => p.includes('charset=')) ?? 'charset=utf-8') === 'charset=utf-8',
    )
    .map((part) => part.split(';')[0]!)
    .reverse();
  for (const [regular, types] of PROCESSORS) {
    for (const type of asked) {
      const [pre, suf] = type.split('/');
      for (const offered of types) {
        const [offeredPre, offeredSuf] = offered.split('/');
        if ((pre === '*' || pre === offeredPre) && (suf === '*' || suf === offeredSuf)) chosen = regular ? offered : null;
      }
    }
  }
  // Bounded: clients send a handful of distinct headers; others are worked out each time.
  if (mediaTypes.size < 100) mediaTypes.set(header, chosen);
  return chosen;
}
