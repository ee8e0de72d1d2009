import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { RouteDefinition } from './route.js';

// The OpenAPI 3.1 description of v1, printed from the route declarations and their zod schemas.
// Response schemas that carry `.meta({ id })` become named components. What a client sends (bodies,
// parameters) is written out in place under its operation instead: generated clients read a field with a
// `default` in a named component as always there, true of what the server sends, not of what it takes.

type JsonSchema = Record<string, unknown>;

const COMMON_ERRORS: Record<number, string> = {
  401: 'Missing or invalid bearer token or API key (also: revoked or expired).',
  429: 'Too many requests; see Retry-After.',
};

const errorBody: JsonSchema = {
  type: 'object',
  properties: {
    detail: { type: 'string' },
    code: { type: 'string', description: 'On a 401 for a token that is not valid: `token_not_valid`.' },
    reason: { type: 'string', description: 'On a 409: why, as a stable word.' },
  },
  required: ['detail'],
  additionalProperties: false,
};
const fieldErrorsBody: JsonSchema = {
  type: 'object',
  description: 'Field name to its error messages; `non_field_errors` for the input as a whole.',
  additionalProperties: { type: 'array', items: { type: 'string' } },
};

const IDEMPOTENCY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Runs the request once per customer and key: a repeat of the same request within 24 hours, with the same credential, gets the first response again (with `Idempotent-Replayed: true`); the key with another request is a 400, with another credential (a token or another API key) a 409 `idempotency_key_other_credential`, and a repeat while the first still runs waits for it (409 `idempotency_key_in_use` after 10 s). A refused request (4xx) is not kept. A read-only API key is never answered from a kept response.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

const FORMAT_PARAMETER = {
  name: 'format',
  in: 'query',
  required: false,
  description:
    "`csv`: every row (limit and offset do not apply) as a CSV download (RFC 4180, UTF-8, CRLF), streamed; the header row holds the JSON field names. Timestamps are ISO 8601 in UTC (`Z`), numbers E.164; a cell that would start a spreadsheet formula is prefixed with `'`.",
  schema: { type: 'string', enum: ['json', 'csv'] },
};

export function buildOpenApiDocument(routes: RouteDefinition[]) {
  const components: Record<string, JsonSchema> = {
    Error: errorBody,
    FieldErrors: fieldErrorsBody,
  };

  const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
    const defs = (out.$defs ?? {}) as Record<string, JsonSchema>;
    delete out.$defs;
    delete out.$schema;
    if (io === 'input') return inlineDefs(out, defs) as JsonSchema;
    for (const [name, def] of Object.entries(defs)) {
      const named = rewriteRefs(def) as JsonSchema;
      if (components[name] && !isDeepStrictEqual(components[name], named)) throw new Error(`Two schemas are named ${name}.`);
      components[name] = named;
    }
    return rewriteRefs(out) as JsonSchema;
  };

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const parameters = [
      ...objectParameters(route.params, 'path', (s) => toSchema(s, 'input')),
      ...objectParameters(route.query, 'query', (s) => toSchema(s, 'input')),
      ...(route.method === 'POST' ? [IDEMPOTENCY_PARAMETER] : []),
      ...(route.csv ? [FORMAT_PARAMETER] : []),
    ];
    const responses: Record<string, unknown> = {
      [route.status]: route.response
        ? { description: 'Success', content: { 'application/json': { schema: toSchema(route.response, 'output') } } }
        : { description: 'Success (no content)' },
    };
    if (route.csv) {
      (responses[route.status] as { content: Record<string, unknown> }).content['text/csv'] = {
        schema: { type: 'string', description: `Header: ${route.csv.columns.join(', ')}.` },
      };
    }
    // A body that cannot be parsed at all is a 400 with a detail rather than field errors.
    if (route.body) responses[400] = jsonResponse('Invalid input, or a body that cannot be parsed.', [ref('FieldErrors'), ref('Error')]);
    else if (route.query) responses[400] = jsonResponse('Invalid input.', [ref('FieldErrors')]);
    if (route.params) responses[404] = jsonResponse('Not found (or owned by another user).', [ref('Error')]);
    if (route.method !== 'GET') responses[403] = jsonResponse('A read-only API key: it may only read.', [ref('Error')]);
    for (const [status, error] of Object.entries(routeErrors(route))) {
      // A refusal with a body of its own may still be one of the common ones (a write conflict, ...).
      responses[status] = jsonResponse(error.description, error.body ? [toSchema(error.body, 'output'), ref('Error')] : [ref('Error')]);
    }
    if (route.body) {
      responses[413] = jsonResponse('Request body too large.', [ref('Error')]);
      responses[415] = jsonResponse('Unsupported media type.', [ref('Error')]);
    }
    const bodySchema = route.body ? toSchema(route.body, 'input') : undefined;
    (paths[`/api/v1${route.path}`] ??= {})[route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(parameters.length ? { parameters } : {}),
      ...(bodySchema
        ? {
            requestBody: {
              // The server reads a request without a body as `{}`: a body it accepts empty may be left out.
              required: !route.body!.safeParse({}).success,
              content: Object.fromEntries(
                ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'].map((type) => [
                  type,
                  type === 'application/json' && route.example !== undefined
                    ? { schema: bodySchema, example: route.example }
                    : { schema: bodySchema },
                ]),
              ),
            },
          }
        : {}),
      responses,
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Outbound Calling Campaign Service',
      version: '1.0.0',
      description: 'v1 REST compatibility API. GraphQL at /graphql is the canonical API.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A JWT, or an API key (`cfk_...`, created with the GraphQL mutation createApiKey). A read-only key may call GET endpoints only.',
        },
      },
      schemas: components,
    },
  };
}

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** A JSON response whose body is one of `schemas`. */
function jsonResponse(description: string, schemas: JsonSchema[]) {
  return { description, content: { 'application/json': { schema: schemas.length === 1 ? schemas[0] : { anyOf: schemas } } } };
}

/** The route's own refusals and the ones every endpoint has; any write may also meet a conflict. */
function routeErrors(route: RouteDefinition): Record<string, { description: string; body?: z.ZodType }> {
  const errors = Object.fromEntries(
    Object.entries({ ...COMMON_ERRORS, ...route.errors }).map(([status, error]) => [
      status,
      typeof error === 'string' ? { description: error } : error,
    ]),
  );
  if (route.method === 'GET') return errors;
  const conflicts = [
    errors[409]?.description,
    'Another request changed the same data at the same time (reason `concurrent_change`): try again.',
    route.method === 'POST'
      ? 'A request with the same Idempotency-Key is still running (reason `idempotency_key_in_use`), or was sent with another credential (reason `idempotency_key_other_credential`).'
      : '',
  ];
  return { ...errors, 409: { ...errors[409], description: conflicts.filter(Boolean).join(' ') } };
}

function objectParameters(schema: z.ZodType | undefined, location: 'path' | 'query', toSchema: (s: z.ZodType) => JsonSchema) {
  if (!schema) return [];
  const shape = (schema as z.ZodObject).shape as Record<string, z.ZodType>;
  return Object.entries(shape).map(([name, field]) => {
    const fieldSchema = toSchema(field);
    const { description, ...rest } = fieldSchema;
    // What the server reads when the parameter is left out (zod states no default read from text).
    const absent = field.safeParse(undefined);
    return {
      name,
      in: location,
      required: location === 'path' || !absent.success,
      ...(description ? { description } : {}),
      schema: absent.success && absent.data !== undefined ? { ...rest, default: absent.data } : rest,
    };
  });
}

/** The schema with each reference to one of `defs` replaced by that definition, titled with its name. */
function inlineDefs(value: unknown, defs: Record<string, JsonSchema>, within: string[] = []): unknown {
  if (Array.isArray(value)) return value.map((inner) => inlineDefs(inner, defs, within));
  if (!value || typeof value !== 'object') return value;
  const { $ref, ...rest } = value as JsonSchema;
  const own = Object.fromEntries(Object.entries(rest).map(([key, inner]) => [key, inlineDefs(inner, defs, within)]));
  if (typeof $ref !== 'string' || !$ref.startsWith('#/$defs/')) return $ref === undefined ? own : { $ref, ...own };
  const name = $ref.slice('#/$defs/'.length);
  if (within.includes(name)) throw new Error(`The request schema ${name} refers to itself: it cannot be written out in place.`);
  return { title: name, ...(inlineDefs(defs[name], defs, [...within, name]) as JsonSchema), ...own };
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        key === '$ref' && typeof inner === 'string' ? inner.replace('#/$defs/', '#/components/schemas/') : rewriteRefs(inner),
      ]),
    );
  }
  return value;
}
