import { z } from 'zod';
import type { RouteDefinition } from './route.js';

// The OpenAPI 3.1 description of v1, printed from the route declarations and their zod schemas.
// Schemas that carry `.meta({ id })` become named components.

type JsonSchema = Record<string, unknown>;

const COMMON_ERRORS: Record<number, string> = {
  401: 'Missing or invalid bearer token or API key (also: revoked or expired).',
  429: 'Too many requests; see Retry-After.',
};

const errorBody: JsonSchema = {
  type: 'object',
  properties: { detail: { type: 'string' }, code: { type: 'string' }, reason: { type: 'string' } },
  required: ['detail'],
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
    'Runs the request once per customer and key: a repeat of the same request within 24 hours gets the first response again (with `Idempotent-Replayed: true`); the key with another request is a 400, and a repeat while the first still runs waits for it (409 `idempotency_key_in_use` after 10 s). A refused request (4xx) is not kept.',
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
    for (const [name, def] of Object.entries(defs)) components[name] = rewriteRefs(def) as JsonSchema;
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
    if (route.body || route.query) responses[400] = refResponse('Invalid input.', 'FieldErrors');
    if (route.params) responses[404] = refResponse('Not found (or owned by another user).', 'Error');
    if (route.method !== 'GET') responses[403] = refResponse('A read-only API key: it may only read.', 'Error');
    for (const [status, description] of Object.entries({ ...COMMON_ERRORS, ...route.errors })) {
      responses[status] = refResponse(description, 'Error');
    }
    if (route.body) {
      responses[413] = refResponse('Request body too large.', 'Error');
      responses[415] = refResponse('Unsupported media type.', 'Error');
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
              required: true,
              content: Object.fromEntries(
                ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'].map((type) => [
                  type,
                  { schema: bodySchema },
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

function refResponse(description: string, name: string) {
  return { description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } };
}

function objectParameters(schema: z.ZodType | undefined, location: 'path' | 'query', toSchema: (s: z.ZodType) => JsonSchema) {
  if (!schema) return [];
  const shape = (schema as z.ZodObject).shape as Record<string, z.ZodType>;
  return Object.entries(shape).map(([name, field]) => {
    const fieldSchema = toSchema(field);
    const { description, ...rest } = fieldSchema;
    return {
      name,
      in: location,
      required: location === 'path' || !field.safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
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
