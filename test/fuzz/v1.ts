import fc from 'fast-check';
import { buildOpenApiDocument } from '../../src/rest/openapi.js';
import { v1Routes } from '../../src/rest/routes/index.js';
import { percentEncode, type HttpRequest } from './http.js';
import { RawJson, resolveIds, toFormText, toJsonText, type IdRef, type Value } from './json-text.js';
import { caller, withDescription, type Plan } from './plan.js';
import {
  anyJson,
  dateText,
  edgeNumber,
  hostileString,
  hostileValue,
  hugeList,
  idKindOf,
  idValue,
  mostly,
  objectOf,
  plainText,
  valueFor,
} from './values.js';

// Requests to every v1 endpoint, read from the OpenAPI document the router's own route declarations
// print: each path with its ids, each query parameter, each body field by its JSON Schema, in every
// content type the router reads and a few it refuses.

type Schema = Record<string, any>;

interface Operation {
  parameters?: { name: string; in: 'path' | 'query'; schema: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}

const document = buildOpenApiDocument(v1Routes) as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

const resolve = (schema: Schema): Schema =>
  typeof schema.$ref === 'string' ? resolve(document.components.schemas[schema.$ref.split('/').pop()!]!) : schema;

/** Values for `schema`, a property called `name`; with `hostile`, any part may be replaced by anything. */
function fromSchema(raw: Schema, name: string, hostile: boolean): fc.Arbitrary<Value> {
  const schema = resolve(raw);
  const wrap = (arbitrary: fc.Arbitrary<Value>) => (hostile ? mostly(arbitrary) : arbitrary);
  const hinted = schema.format === 'uuid' || schema.enum ? undefined : valueFor(name, hostile);
  if (hinted) return wrap(hinted);
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices) return fc.oneof(...(choices as Schema[]).map((choice) => fromSchema(choice, name, hostile)));
  if (schema.enum) return wrap(fc.constantFrom(...(schema.enum as Value[])));
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((type) => fromSchema({ ...schema, type }, name, hostile)));
  switch (types[0]) {
    case 'string':
      if (schema.format === 'uuid') return wrap(idValue(idKindOf(name), hostile));
      if (schema.format === 'date-time') return wrap(dateText);
      if (schema.format === 'binary') return wrap(fc.constantFrom(...CSV_FILES));
      if (schema.pattern) return wrap(fc.stringMatching(new RegExp(schema.pattern)));
      return wrap(plainText);
    case 'integer': {
      const inRange = fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 });
      return wrap(hostile ? fc.oneof(inRange, edgeNumber) : inRange);
    }
    case 'number':
      return wrap(hostile ? edgeNumber : fc.integer({ min: 0, max: 1000 }));
    case 'boolean':
      return wrap(fc.boolean());
    case 'array': {
      const items = schema.items ? fromSchema(schema.items, `${name}[]`, hostile) : anyJson;
      const list = fc.array(items, { minLength: schema.minItems ?? 0, maxLength: 4 });
      return wrap(
        schema.items?.enum ? fc.oneof({ arbitrary: list, weight: 9 }, { arbitrary: hugeList(schema.items.enum), weight: 1 }) : list,
      );
    }
    case 'object': {
      const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
      if (properties.length === 0) return wrap(fc.dictionary(fc.string({ maxLength: 12 }), anyJson, { maxKeys: 5 }));
      const shape = Object.fromEntries(properties.map(([key, property]) => [key, fromSchema(property, key, hostile)]));
      return wrap(objectOf(shape, (schema.required ?? []) as string[]));
    }
    default:
      return wrap(anyJson);
  }
}

/** Query parameters are text: numbers as written, and text no parser expects, sometimes not even valid percent-encoding. */
const queryText: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: -5, max: 1000 }).map(String),
  fc.constantFrom('9007199254740993', '99999999999999999999', '1e3', '1.5', '', ' 7 ', '0x10'),
  hostileString.map(percentEncode),
  fc.constantFrom('%ED%A0%80', '%FF', '%', '%00', '%E2%80%AE'),
);

const CSV_FILES = [
  'Phone,Name\n+14155550123,Ann\n',
  'Phone\n',
  '',
  'a,b\n1,2\n',
  'Phone,Notes\n+14155550124,bad\u0000\n',
  'PK\u0003\u0004zip',
  '\ufeffPhone;Name\r\n+14155550125;Bo\r\n',
];

interface Encoding {
  transport: string;
  /** How often, against the others: mostly JSON, the way most clients send. */
  weight: number;
  contentType?: string;
  /** The body for a value whose ids are resolved. */
  encode(value: Value, fileFields: string[]): HttpRequest['body'];
}

/** A form's fields: a body object's members, or the whole value as one field. */
const formFields = (value: Value): [string, Value][] =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof RawJson)
    ? Object.entries(value)
    : [['value', value]];

const ENCODINGS: Encoding[] = [
  { transport: 'json', weight: 4, contentType: 'application/json', encode: toJsonText },
  { transport: 'json', weight: 2, contentType: 'application/json; charset=utf-8', encode: toJsonText },
  { transport: 'json', weight: 1, contentType: 'application/vnd.api+json', encode: toJsonText },
  {
    transport: 'urlencoded',
    weight: 3,
    contentType: 'application/x-www-form-urlencoded',
    encode: (value) => new URLSearchParams(formFields(value).map(([key, item]) => [key, toFormText(item)])).toString(),
  },
  {
    transport: 'multipart',
    weight: 3,
    encode: (value, fileFields) => {
      const form = new FormData();
      for (const [key, item] of formFields(value)) {
        if (fileFields.includes(key) && typeof item === 'string') form.append(key, new Blob([item], { type: 'text/csv' }), 'contacts.csv');
        else if (Array.isArray(item)) for (const one of item) form.append(key, toFormText(one));
        else form.append(key, toFormText(item));
      }
      return form;
    },
  },
  { transport: 'multipart without boundary', weight: 1, contentType: 'multipart/form-data', encode: toJsonText },
  {
    transport: 'multipart, wrong boundary',
    weight: 1,
    contentType: 'multipart/form-data; boundary=nope',
    encode: () => '--other\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--other--\r\n',
  },
  { transport: 'malformed json', weight: 1, contentType: 'application/json', encode: (value) => toJsonText(value).slice(0, -1) || '{' },
  { transport: 'refused type', weight: 1, contentType: 'text/plain', encode: toJsonText },
  { transport: 'refused type', weight: 1, contentType: 'application/xml', encode: () => '<a/>' },
  { transport: 'no content type', weight: 1, encode: toJsonText },
];

const encoding: fc.Arbitrary<Encoding> = fc.oneof(...ENCODINGS.map((e) => ({ arbitrary: fc.constant(e), weight: e.weight })));

function operationPlans(path: string, method: string, operation: Operation): fc.Arbitrary<Plan> {
  const params = operation.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const bodySchema = operation.requestBody?.content['application/json']?.schema;
  const body = bodySchema ? resolve(bodySchema) : undefined;
  const fileFields = Object.entries((body?.properties ?? {}) as Record<string, Schema>)
    .filter(([, s]) => s.format === 'binary')
    .map(([k]) => k);
  const kind = idKindOf(path.replace(/\{\w+\}/g, ''));

  const pathValues = fc.tuple(...pathParams.map(() => mostly(idValue(kind, true))));
  const names = fc.oneof(
    { arbitrary: fc.constantFrom(...(queryParams.length ? queryParams.map((p) => p.name) : ['limit'])), weight: 5 },
    { arbitrary: fc.constantFrom('format', 'page', 'limit[]', 'x'), weight: 1 },
  );
  // An endpoint without query parameters mostly gets none, so that its body decides the answer.
  const anyQuery = fc.dictionary(names, queryText, { maxKeys: 3 });
  const query = queryParams.length ? anyQuery : fc.oneof({ arbitrary: fc.constant({}), weight: 3 }, { arbitrary: anyQuery, weight: 1 });
  const bodyValue = body
    ? fc.oneof(
        { arbitrary: fromSchema(body, '', false), weight: 5 },
        { arbitrary: fromSchema(body, '', true), weight: 4 },
        { arbitrary: hostileValue, weight: 1 },
      )
    : fc.constant<Value>(null);
  const bodyPlan = body ? fc.record({ value: bodyValue, encoding }) : fc.constant(undefined);
  const otherMethod = fc.oneof(
    { arbitrary: fc.constant(method.toUpperCase()), weight: 19 },
    { arbitrary: fc.constantFrom('PUT', 'OPTIONS', 'HEAD', 'DELETE'), weight: 1 },
  );
  const slash = fc.oneof({ arbitrary: fc.constant(true), weight: 19 }, { arbitrary: fc.constant(false), weight: 1 });

  return fc
    .record({ caller, pathValues, query, bodyPlan, verb: otherMethod, slash })
    .map(({ caller: who, pathValues: ids, query: q, bodyPlan: b, verb, slash: keepSlash }) =>
      withDescription({
        surface: 'v1',
        endpoint: `${method.toUpperCase()} ${path}`,
        transport: b?.encoding.transport ?? verb,
        caller: who,
        build(idOf: (ref: IdRef) => string): HttpRequest {
          let filled = path;
          pathParams.forEach((p, i) => (filled = filled.replace(`{${p.name}}`, percentEncode(toFormText(resolveIds(ids[i]!, idOf))))));
          if (!keepSlash) filled = filled.replace(/\/$/, '');
          const search = Object.entries(q)
            .map(([k, v]) => `${percentEncode(k)}=${v}`)
            .join('&');
          const headers: Record<string, string> = b?.encoding.contentType ? { 'content-type': b.encoding.contentType } : {};
          const withBody = b && verb !== 'GET' && verb !== 'HEAD';
          return {
            method: verb,
            path: filled + (search ? `?${search}` : ''),
            headers,
            body: withBody ? b.encoding.encode(resolveIds(b.value, idOf), fileFields) : undefined,
          };
        },
      }),
    );
}

/**
 * A request to any v1 endpoint; deletes are a third as likely as the others, so that the fixture's
 * resources outlast the first few hundred requests.
 */
export const v1Plans: fc.Arbitrary<Plan> = fc.oneof(
  ...Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      arbitrary: operationPlans(path, method, operation),
      weight: method === 'delete' ? 1 : 3,
    })),
  ),
);

/** Every v1 endpoint, as `METHOD /path`. */
export const v1Endpoints = Object.entries(document.paths).flatMap(([path, operations]) =>
  Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
);
