import fc from 'fast-check';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLOutputType,
} from 'graphql';
import { buildSchema } from '../../src/schema/index.js';
import type { HttpRequest } from './http.js';
import { FilePart, RawJson, resolveIds, toJsonText, type IdRef, type Value } from './json-text.js';
import { caller, withDescription, type Plan } from './plan.js';
import {
  anyJson,
  dateText,
  edgeNumber,
  hostileValue,
  hugeList,
  idKindOf,
  idValue,
  mostly,
  objectOf,
  plainText,
  valueFor,
} from './values.js';

// Operations on every root query and mutation field of the schema the server builds, with every
// argument (the root field's and those of the fields it selects) as a variable or written inline,
// sent in every way /graphql reads a request and a few it refuses.

const schema = buildSchema();

/** Values for an argument or input field of `type` called `name` on `owner`; with `hostile`, any part may be anything. */
function inputValue(type: GraphQLInputType, name: string, owner: string, hostile: boolean): fc.Arbitrary<Value> {
  const wrap = (arbitrary: fc.Arbitrary<Value>) => (hostile ? mostly(arbitrary) : arbitrary);
  if (isNonNullType(type)) return inputValue(type.ofType, name, owner, hostile);
  const named = getNamedType(type);
  const hinted = isInputObjectType(named) || isEnumType(named) || named.name === 'UUID' ? undefined : valueFor(name, hostile);
  if (hinted) return wrap(hinted);
  if (isListType(type)) {
    const item = getNamedType(type);
    const list = fc.array(inputValue(type.ofType, `${name}[]`, owner, hostile), { maxLength: 4 });
    if (!isEnumType(item)) return wrap(list);
    return wrap(fc.oneof({ arbitrary: list, weight: 9 }, { arbitrary: hugeList(item.getValues().map((v) => v.name)), weight: 1 }));
  }
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    const shape = Object.fromEntries(fields.map((field) => [field.name, inputValue(field.type, field.name, type.name, hostile)]));
    return wrap(
      objectOf(
        shape,
        fields.filter((field) => isNonNullType(field.type)).map((field) => field.name),
      ),
    );
  }
  if (isEnumType(type)) return wrap(fc.constantFrom(...type.getValues().map((v) => v.name)));
  switch (type.name) {
    case 'UUID':
    case 'ID':
      return wrap(idValue(idKindOf(name === 'id' ? owner : name, owner), hostile));
    case 'DateTime':
      return wrap(dateText);
    // Well-shaped numbers fit every range the schema's inputs have (1 to 10 attempts, 1 to 1,000 calls, ...).
    case 'Int':
      return wrap(hostile ? fc.oneof(fc.integer({ min: -5, max: 600 }), edgeNumber) : fc.integer({ min: 1, max: 10 }));
    case 'Float':
    case 'BigInt':
      return wrap(hostile ? fc.oneof(fc.integer({ min: -1000, max: 100_000 }), edgeNumber) : fc.integer({ min: 1, max: 100_000 }));
    case 'Boolean':
      return wrap(fc.boolean());
    case 'JSON':
      return wrap(
        fc.oneof(
          fc.dictionary(fc.constantFrom('Phone', 'Name', 'first_name', 'agent_name', 'company_name', 'notes', 'x'), anyJson, {
            maxKeys: 4,
          }),
          anyJson,
        ),
      );
    case 'File':
      return wrap(
        fc.constantFrom('Phone,Name\n+14155550123,Ann\n', '', 'Phone\n', 'x,y\n\u0000\n').map((content) => new FilePart(content)),
      );
    default:
      return wrap(plainText);
  }
}

/** A field of the selection that takes arguments, where generated values go. */
interface ArgumentSite {
  owner: string;
  args: readonly GraphQLArgument[];
}

interface Selected {
  field: GraphQLField<unknown, unknown>;
  site: number | undefined;
  children: Selected[] | undefined;
}

/** The fields selected under `type`: every leaf, and objects two levels down. */
function selectionOf(type: GraphQLOutputType, depth: number, sites: ArgumentSite[]): Selected[] | undefined {
  const named = getNamedType(type);
  if (isLeafType(named)) return undefined;
  if (!isObjectType(named)) return [];
  const selected: Selected[] = [];
  for (const field of Object.values((named as GraphQLObjectType).getFields())) {
    const leaf = isLeafType(getNamedType(field.type));
    if (!leaf && depth >= 2) continue;
    const site = field.args.length ? sites.push({ owner: field.name, args: field.args }) - 1 : undefined;
    selected.push({ field, site, children: leaf ? undefined : selectionOf(field.type, depth + 1, sites) });
  }
  return selected;
}

/** `argument name -> value` for each argument site, the required ones always, the others now and then. */
const siteValues = (site: ArgumentSite, hostile: boolean) =>
  objectOf(
    Object.fromEntries(site.args.map((arg) => [arg.name, inputValue(arg.type, arg.name, site.owner, hostile)])),
    site.args.filter((arg) => isNonNullType(arg.type)).map((arg) => arg.name),
  ) as fc.Arbitrary<Record<string, Value>>;

const nullable = (type: GraphQLInputType): GraphQLInputType => (isNonNullType(type) ? type.ofType : type);
const itemType = (type: GraphQLInputType): GraphQLInputType => {
  const inner = nullable(type);
  return isListType(inner) ? inner.ofType : inner;
};
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** A value written inline, as a GraphQL literal of `type`. */
const literal = (value: Value, type: GraphQLInputType): string => {
  const named = getNamedType(type);
  // GraphQL writes object keys without quotes; deep or huge JSON is otherwise written the same.
  if (value instanceof RawJson) return value.text.replace(/"([_A-Za-z]\w*)":/g, '$1:');
  if (value instanceof FilePart) return JSON.stringify(value.content);
  if (Array.isArray(value)) return `[${value.map((item) => literal(item, itemType(type))).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const fields = isInputObjectType(named) ? named.getFields() : {};
    return `{${Object.entries(value)
      .map(([key, item]) => `${NAME.test(key) ? key : JSON.stringify(key)}: ${literal(item, fields[key]?.type ?? named)}`)
      .join(', ')}}`;
  }
  if (typeof value === 'string' && isEnumType(named) && NAME.test(value)) return value;
  return JSON.stringify(value) ?? 'null';
};

/** One time in five `arbitrary`, else null: most operations give the nested fields no arguments, and declare no unused variable. */
const rarely = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: fc.constant(null), weight: 4 }, { arbitrary, weight: 1 });

/** What is generated for one operation: the arguments given at each site, which sites are written inline, an unused variable. */
interface Choices {
  chosen: (Record<string, Value> | null)[];
  inline: boolean[];
  unused: Value | null;
}

interface Operation {
  document: string;
  variables: Record<string, Value>;
  operationName: string;
}

function fieldPlans(rootType: 'query' | 'mutation', root: GraphQLField<unknown, unknown>): fc.Arbitrary<Plan> {
  const sites: ArgumentSite[] = [{ owner: root.name, args: root.args }];
  const selection = selectionOf(root.type, 0, sites);
  const values = (hostile: boolean) =>
    fc.tuple(siteValues(sites[0]!, hostile), ...sites.slice(1).map((site) => rarely(siteValues(site, hostile)))) as fc.Arbitrary<
      (Record<string, Value> | null)[]
    >;

  const choices: fc.Arbitrary<Choices> = fc.record({
    chosen: fc.oneof({ arbitrary: values(false), weight: 1 }, { arbitrary: values(true), weight: 1 }),
    inline: fc.array(fc.boolean(), { minLength: sites.length, maxLength: sites.length }),
    unused: rarely(hostileValue),
  });

  /** The operation, once the ids its values name are known. */
  const operation = ({ chosen, inline, unused }: Choices, idOf: (ref: IdRef) => string): Operation => {
    const declarations: string[] = [];
    const variables: Record<string, Value> = {};
    const argumentsOf = (siteIndex: number | undefined): string => {
      const given = siteIndex === undefined ? null : chosen[siteIndex];
      if (siteIndex === undefined || !given) return '';
      const written = Object.entries(given).map(([name, value]) => {
        const arg = sites[siteIndex]!.args.find((a) => a.name === name)!;
        const resolved = resolveIds(value, idOf);
        if (inline[siteIndex]) return `${name}: ${literal(resolved, arg.type)}`;
        const variable = `v${siteIndex}_${name}`;
        declarations.push(`$${variable}: ${String(arg.type)}`);
        variables[variable] = resolved;
        return `${name}: $${variable}`;
      });
      return written.length ? `(${written.join(', ')})` : '';
    };
    const print = (fields: Selected[] | undefined): string =>
      fields === undefined
        ? ''
        : `{ __typename ${fields.map((s) => `${s.field.name}${argumentsOf(s.site)} ${print(s.children)}`).join(' ')} }`;
    const body = `${root.name}${argumentsOf(0)} ${print(selection)}`;
    if (unused !== null) {
      declarations.push('$unused: JSON');
      variables.unused = unused;
    }
    const head = declarations.length ? `(${declarations.join(', ')})` : '';
    return { document: `${rootType} Fuzz${head} { ${body} }`, variables, operationName: 'Fuzz' };
  };

  return fc.record({ caller, choices, transport: transports(rootType) }).map(({ caller: who, choices: chosen, transport }) =>
    withDescription({
      surface: 'graphql',
      endpoint: `${rootType === 'query' ? 'Query' : 'Mutation'}.${root.name}`,
      transport: transport.name,
      caller: who,
      build: (idOf) => transport.request(operation(chosen, idOf)),
    }),
  );
}

interface Transport {
  name: string;
  request(operation: Operation): HttpRequest;
}

const json = (contentType: string, body: string): HttpRequest => ({
  method: 'POST',
  path: '/graphql',
  headers: { 'content-type': contentType },
  body,
});

/** What a GET query or a multipart upload must carry (CSRF prevention); one transport leaves it out. */
const CSRF = { 'x-graphql-yoga-csrf': '1' };

/** `variables.input.file` for each file in the variables; the files themselves become null in the operation. */
function takeFiles(value: Value, path: string, files: [string, FilePart][]): Value {
  if (value instanceof FilePart) {
    files.push([path, value]);
    return null;
  }
  if (Array.isArray(value)) return value.map((item, i) => takeFiles(item, `${path}.${i}`, files));
  if (value !== null && typeof value === 'object' && !(value instanceof RawJson)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, takeFiles(item, `${path}.${key}`, files)]));
  }
  return value;
}

const operationText = (op: Operation, extra: Record<string, Value> = {}) =>
  toJsonText({ query: op.document, variables: op.variables, operationName: op.operationName, ...extra });

const TRANSPORTS: { transport: Transport; weight: number; mutations?: false }[] = [
  { weight: 12, transport: { name: 'json', request: (op) => json('application/json', operationText(op)) } },
  { weight: 1, transport: { name: 'refused type', request: (op) => json('application/graphql-response+json', operationText(op)) } },
  { weight: 1, transport: { name: 'graphql+json', request: (op) => json('application/graphql+json', operationText(op)) } },
  {
    weight: 3,
    mutations: false,
    transport: {
      name: 'GET',
      request: (op) => ({
        method: 'GET',
        path: `/graphql?${new URLSearchParams({ query: op.document, variables: toJsonText(op.variables), operationName: op.operationName })}`,
        headers: { accept: 'application/json', ...CSRF },
      }),
    },
  },
  {
    weight: 2,
    transport: {
      name: 'urlencoded',
      request: (op) => ({
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ query: op.document, variables: toJsonText(op.variables) }).toString(),
      }),
    },
  },
  {
    weight: 4,
    transport: {
      name: 'multipart',
      request: (op) => {
        const files: [string, FilePart][] = [];
        const variables = takeFiles(op.variables, 'variables', files);
        const form = new FormData();
        form.set('operations', toJsonText({ query: op.document, variables }));
        form.set('map', JSON.stringify(Object.fromEntries(files.map(([path], i) => [String(i), [path]]))));
        files.forEach(([, file], i) => form.set(String(i), new Blob([file.content], { type: 'text/csv' }), `f${i}.csv`));
        return { method: 'POST', path: '/graphql', headers: { ...CSRF }, body: form };
      },
    },
  },
  {
    weight: 1,
    transport: {
      name: 'multipart without the CSRF header',
      request: (op) => {
        const form = new FormData();
        form.set('operations', operationText(op));
        form.set('map', '{}');
        return { method: 'POST', path: '/graphql', headers: {}, body: form };
      },
    },
  },
  { weight: 1, transport: { name: 'application/graphql', request: (op) => json('application/graphql', op.document) } },
  {
    weight: 1,
    transport: {
      name: 'query not a string',
      request: (op) => json('application/json', toJsonText({ query: [op.document], variables: op.variables })),
    },
  },
  {
    weight: 1,
    transport: {
      name: 'variables not an object',
      request: (op) => json('application/json', toJsonText({ query: op.document, variables: toJsonText(op.variables) })),
    },
  },
  {
    weight: 1,
    transport: {
      name: 'hostile extensions',
      request: (op) =>
        json(
          'application/json',
          operationText(op, { extensions: new RawJson('{"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}') }),
        ),
    },
  },
  { weight: 1, transport: { name: 'batch', request: (op) => json('application/json', `[${operationText(op)},${operationText(op)}]`) } },
  { weight: 1, transport: { name: 'malformed json', request: (op) => json('application/json', operationText(op).slice(0, -2)) } },
  {
    weight: 1,
    transport: {
      name: 'multipart, bad map',
      request: (op) => {
        const form = new FormData();
        form.set('operations', operationText(op));
        form.set('map', ['{"0":5}', '{"0":[5]}', '[1]', '{', '{"0":["variables"]}', '{"0":["query"]}'][op.document.length % 6]!);
        form.set('0', 'not a file');
        return { method: 'POST', path: '/graphql', headers: { ...CSRF }, body: form };
      },
    },
  },
  {
    weight: 1,
    transport: {
      name: 'GET, bad variables',
      request: (op) => ({
        method: 'GET',
        path: `/graphql?${new URLSearchParams({ query: op.document, variables: '{"a":' })}`,
        headers: { ...CSRF },
      }),
    },
  },
  { weight: 1, transport: { name: 'refused type', request: (op) => json('text/plain', operationText(op)) } },
  { weight: 1, transport: { name: 'multipart without boundary', request: (op) => json('multipart/form-data', operationText(op)) } },
];

const transports = (rootType: 'query' | 'mutation') =>
  fc.oneof(
    ...TRANSPORTS.filter((t) => rootType === 'query' || t.mutations !== false).map(({ transport, weight }) => ({
      arbitrary: fc.constant(transport),
      weight,
    })),
  );

const rootFields = [
  ...Object.values(schema.getQueryType()!.getFields()).map((field) => ['query', field] as const),
  ...Object.values(schema.getMutationType()!.getFields()).map((field) => ['mutation', field] as const),
];

/** An operation on any root query or mutation field; those that delete or end something are a third as likely. */
export const graphqlPlans: fc.Arbitrary<Plan> = fc.oneof(
  ...rootFields.map(([rootType, field]) => ({
    arbitrary: fieldPlans(rootType, field),
    weight: /^(delete|archive|cancel|remove)/.test(field.name) ? 1 : 3,
  })),
);

/** Every root field, as `Query.name` or `Mutation.name`. */
export const graphqlEndpoints = rootFields.map(([rootType, field]) => `${rootType === 'query' ? 'Query' : 'Mutation'}.${field.name}`);
