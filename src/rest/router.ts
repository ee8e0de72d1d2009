import { Hono, type Context } from 'hono';
import { refuseWritesWithReadKey } from '../services/api-keys/api-keys.js';
import type { Authenticator } from '../services/auth.js';
import { serviceContext, type ServiceContext, type ServiceEnv } from '../services/context.js';
import type { BodyLimits } from '../config.js';
import { scopeOf, type RequestScope } from '../http/request-scope.js';
import type { RateLimitBucket, RateLimiter } from '../ops/rate-limits.js';
import { NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../services/errors.js';
import { refuseUnsafeInput } from '../services/input-safety.js';
import { fieldErrorsOf } from '../services/validation.js';
import { ArrivingBody, BodyParseError, isJsonMediaType, readBody } from '../http/body.js';
import { NotStreamable, streamJsonList } from '../http/json-list.js';
import { apiRoot } from './api-root.js';
import { csvResponse } from './csv.js';
import { exportDownload } from './exports.js';
import { camelCaseFields } from './field-case.js';
import { errorResponse, json } from '../http/errors.js';
import { docsAssetsPath, docsPage, serveDocsAsset } from './docs.js';
import { buildOpenApiDocument } from './openapi.js';
import type { RouteDefinition, RouteInput } from './route.js';
import { v1Routes } from './routes/index.js';

export interface RestDeps {
  env: ServiceEnv;
  authenticator: Authenticator;
  limits: BodyLimits;
  rateLimiter: RateLimiter;
  routes?: RouteDefinition[];
  /** A token Swagger UI starts authorized with (the demo's, in development). */
  docsToken?: string | undefined;
}

export const V1_PREFIX = '/api/v1';

export const toHonoPath = (path: string) => V1_PREFIX + path.replace(/\{(\w+)\}/g, ':$1');

/** The v1 REST surface: thin handlers over the service layer, with DRF's conventions. */
export function createRestApp(deps: RestDeps): Hono {
  const routes = deps.routes ?? v1Routes;
  const app = new Hono({ strict: true });
  // Built on its first request: a start does not wait for it (30 ms of CPU), and most processes never serve it.
  let openapi: ReturnType<typeof buildOpenApiDocument> | undefined;

  // A path without its trailing slash answers 308 to the slashed one, keeping method and body.
  app.use(`${V1_PREFIX}/*`, async (c, next) => {
    // Most requests are slashed already: only the others pay for parsing their URL.
    if (c.req.path.endsWith('/')) return next();
    const url = new URL(c.req.url);
    if (!url.pathname.endsWith('/') && !url.pathname.startsWith(docsAssetsPath)) {
      url.pathname += '/';
      return c.redirect(url.pathname + url.search, 308);
    }
    await next();
  });

  app.get(
    `${V1_PREFIX}/`,
    apiRoot(routes, { prefix: V1_PREFIX, docs: `${V1_PREFIX}/docs/`, schema: `${V1_PREFIX}/schema/`, graphql: '/graphql' }),
  );
  app.get(`${V1_PREFIX}/schema/`, (c) => c.json((openapi ??= buildOpenApiDocument(routes))));
  const docs = docsPage(`${V1_PREFIX}/schema/`, deps.docsToken);
  app.get(`${V1_PREFIX}/docs/`, (c) => c.html(docs));
  app.get(`${docsAssetsPath}:file`, (c) => serveDocsAsset(c.req.param('file')));

  // Static paths first: `/campaigns/recordings/` must not be taken for `/campaigns/{id}/`.
  for (const route of [...routes].sort((a, b) => paramCount(a.path) - paramCount(b.path))) {
    app.on(route.method, toHonoPath(route.path), (c) => handle(c, route, deps));
  }

  // Any other method on a known path: 405 with the methods that path has, static paths first again.
  const methodsByPath = new Map<string, string[]>();
  for (const route of routes) methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), route.method]);
  const byStaticness = [...methodsByPath.keys()].sort((a, b) => paramCount(a) - paramCount(b));
  for (const path of byStaticness) {
    const allowed = methodsByPath.get(path)!;
    app.all(toHonoPath(path), (c) => {
      const params = c.req.param() as Record<string, string>;
      if (!paramsLookValid(params)) return json(404, { detail: 'Not found.' });
      return json(405, { detail: `Method "${c.req.method}" not allowed.` }, { allow: allowed.join(', ') });
    });
  }

  app.all(`${V1_PREFIX}/*`, () => json(404, { detail: 'Not found.' }));
  // The CSV exports' download links, which GraphQL hands out (services/exports/links.ts).
  app.get('/exports/:token/', exportDownload(deps, routes));
  return app;
}

export const paramCount = (path: string) => (path.match(/\{/g) ?? []).length;

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Path ids are UUIDs, as in DRF's `<uuid:pk>`: any other value does not name a resource at all. */
function paramsLookValid(params: Record<string, string>): boolean {
  return Object.values(params).every((value) => UUID_SHAPE.test(value));
}

async function handle(c: Context, route: RouteDefinition, deps: RestDeps): Promise<Response> {
  const scope = scopeOf(c);
  let arriving: ArrivingBody | undefined;
  let spent: { userId: string; buckets: RateLimitBucket[] } | undefined;
  try {
    const rawParams = c.req.param() as Record<string, string>;
    const ctx = await admit(route, deps, rawParams, c.req.header('authorization'), scope);
    if (route.rateLimit) spent = { userId: ctx.user.id, buckets: [route.rateLimit] };

    const limit = route.largeBody ? deps.limits.maxImportBodyBytes : deps.limits.maxBodyBytes;
    const rawQuery = firstValues(c.req.queries());
    arriving = route.body ? new ArrivingBody(c.req.raw, limit) : undefined;
    if (arriving && route.streamList && canStream(c.req.raw, limit)) {
      const result = await streamed(route, arriving, rawParams, rawQuery, ctx);
      if (result !== undefined) return json(route.status, result);
    }
    const rawBody = route.body ? await readBody(c.req.raw, limit, arriving) : {};
    const input = parseInput(route, rawParams, rawQuery, rawBody);
    if (route.csv && rawQuery.format === 'csv') return await csvResponse(route.csv, input, ctx);
    const result = await route.handler(input, ctx);
    if (route.status === 204 || result === undefined) return new Response(null, { status: route.status });
    return json(route.status, result);
  } catch (error) {
    if (spent && refusedForInput(error)) await deps.rateLimiter.giveBack(spent.userId, spent.buckets);
    if (error instanceof BodyParseError) return json(400, { detail: error.message });
    return routeErrorResponse(route, error, scope);
  } finally {
    // The answer holds nothing of the body: its memory goes back now.
    arriving?.release();
  }
}

/**
 * What every request to a route passes before its body is read, in this order: ids that look like ids,
 * the caller, a read-only key refused a write, the caller's budgets (before the body, so that a refused
 * import is not parsed). The caller's context, for the handler.
 */
export async function admit(
  route: RouteDefinition,
  deps: RestDeps,
  rawParams: Record<string, string>,
  authorization: string | undefined,
  scope: RequestScope,
): Promise<ServiceContext> {
  if (!paramsLookValid(rawParams)) throw new NotFoundError();
  const user = await deps.authenticator.authenticate(authorization);
  scope.userId = user.id;
  refuseWritesWithReadKey(user, route.method !== 'GET');
  await deps.rateLimiter.consume(user.id, route.rateLimit ? [route.rateLimit] : []);
  return serviceContext(deps.env, user, scope.requestId, scope);
}

/** The route's input from the request's raw values: refused when unsafe, then checked by the route's schemas. */
export function parseInput(
  route: RouteDefinition,
  rawParams: Record<string, string>,
  rawQuery: Record<string, string>,
  rawBody: unknown,
): RouteInput<unknown, unknown, unknown> {
  refuseUnsafeInput(rawQuery);
  refuseUnsafeInput(rawBody);
  const params = route.params ? route.params.parse(rawParams) : {};
  const query = route.query ? parseOrThrow(route.query, rawQuery) : {};
  const body = route.body ? parseOrThrow(route.body, rawBody) : {};
  return { params, query, body };
}

/** A route's refusal or failure as v1 answers it: field errors in the route's case. */
export function routeErrorResponse(route: RouteDefinition, error: unknown, scope: RequestScope): Response {
  if (error instanceof ValidationError && route.fieldCase === 'camel') {
    return errorResponse(new ValidationError(camelCaseFields(error.fieldErrors)), scope.log);
  }
  return errorResponse(error, scope.log);
}

/** Refused for what the request carried (400, 413, 415): nothing was done, so its bucket is given back. */
function refusedForInput(error: unknown): boolean {
  return (
    error instanceof BodyParseError ||
    error instanceof ValidationError ||
    error instanceof PayloadTooLargeError ||
    error instanceof UnsupportedMediaTypeError
  );
}

/** A JSON body of a declared length within the limit: the only kind read as it arrives. */
function canStream(request: Request, limit: number): boolean {
  const declared = Number(request.headers.get('content-length') ?? '');
  const mediaType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  return request.body !== null && isJsonMediaType(mediaType) && Number.isSafeInteger(declared) && declared > 0 && declared <= limit;
}

/**
 * The route's `streamList` handler on the body as it arrives, checked as a whole body would be; undefined
 * when the whole body must decide instead (see RouteDefinition.streamList). Before the handler, anything
 * that goes wrong is left to the whole body's path too, so that its answer keeps its own order of checks.
 */
async function streamed(
  route: RouteDefinition,
  arriving: ArrivingBody,
  rawParams: Record<string, string>,
  rawQuery: Record<string, string>,
  ctx: ServiceContext,
): Promise<unknown> {
  const { field, batchBytes, handler } = route.streamList!;
  let input: RouteInput<unknown, unknown, unknown>;
  let items: AsyncIterable<unknown[]>;
  try {
    const list = await streamJsonList(arriving, field, batchBytes);
    refuseUnsafeInput(rawQuery);
    const params = route.params ? route.params.parse(rawParams) : {};
    const query = route.query ? parseOrThrow(route.query, rawQuery) : {};
    const body = route.body ? parseOrThrow(route.body, { ...list.head, [field]: [] }) : {};
    input = { params, query, body };
    items = list.items;
  } catch {
    return undefined;
  }
  try {
    return await handler(input, items, ctx);
  } catch (error) {
    if (error instanceof NotStreamable || error instanceof ValidationError) return undefined;
    throw error;
  }
}

function parseOrThrow(schema: NonNullable<RouteDefinition['body']>, input: unknown): unknown {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationError(fieldErrorsOf(result.error));
  return result.data;
}

function firstValues(queries: Record<string, string[]>): Record<string, string> {
  return Object.fromEntries(Object.entries(queries).map(([key, values]) => [key, values[0] ?? '']));
}
