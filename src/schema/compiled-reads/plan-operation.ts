import {
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getNullableType,
  getOperationAST,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  isAbstractType,
  isEnumType,
  isObjectType,
  isScalarType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import type { ConnectionPart, EdgePart, ListQuery, Node, Page, PageInfoPart, ReadPlan, ScalarForm, Value } from '../../db/reads/plan.js';
import type { GraphQLContext } from '../context.js';
import { COMPILED_CONNECTION, COMPILED_ITEM, COMPILED_VALUE, type CompiledConnection, type CompiledItem } from './declare.js';

// Turns a query operation into a read plan, or answers null when any part of it is not something the
// plan can say: then the operation runs the ordinary way, resolver by resolver, with the same answer.
// What it follows is what Pothos records on the schema: a field's exposed column, its relation, its
// connection options (cursor, sizes, the relation's filter and order), and its authorization.

class NotCompilable extends Error {}

/** The model of a connection's nodes (connection → edges → node). */
function connectionModel(field: GraphQLField<unknown, unknown>): string {
  const connection = getNullableType(field.type);
  const edge = isObjectType(connection) ? getNamedType(connection.getFields().edges?.type) : undefined;
  const node = isObjectType(edge) ? getNamedType(edge.getFields().node?.type) : undefined;
  const model = isObjectType(node) ? node.extensions?.pothosPrismaModel : undefined;
  if (typeof model !== 'string') throw new NotCompilable();
  return model;
}

/** The text value of a cursor Pothos wrote for a text field (`GPC:S:` and the value, in base64). */
function cursorValue(cursor: unknown): string {
  const decoded = typeof cursor === 'string' ? Buffer.from(cursor, 'base64').toString('utf8') : '';
  if (!decoded.startsWith('GPC:S:') || Buffer.from(decoded).toString('base64') !== cursor) throw new NotCompilable();
  return decoded.slice('GPC:S:'.length);
}

/** A relation's or a service's query, when it is only a filter and an order. */
function listQuery(query: unknown): ListQuery {
  if (!query || typeof query !== 'object' || Object.keys(query).some((k) => k !== 'where' && k !== 'orderBy')) throw new NotCompilable();
  return query as ListQuery;
}

const SCALAR_FORMS: Record<string, ScalarForm> = {
  String: 'string',
  ID: 'string',
  UUID: 'string',
  Int: 'number',
  Boolean: 'boolean',
  DateTime: 'datetime',
};
const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;
const PAGE_INFO: readonly string[] = ['hasNextPage', 'hasPreviousPage', 'startCursor', 'endCursor'] satisfies PageInfoPart[];

const authScopesOf = (field: GraphQLField<unknown, unknown>) =>
  (field.extensions?.pothosOptions as { authScopes?: unknown } | undefined)?.authScopes;
const connectionOf = (field: GraphQLField<unknown, unknown>) => field.extensions?.[COMPILED_CONNECTION] as CompiledConnection | undefined;

class Planner {
  constructor(
    private schema: GraphQLSchema,
    private fragments: Record<string, FragmentDefinitionNode>,
    private variables: Record<string, unknown>,
    private ctx: GraphQLContext,
  ) {}

  /** The fields a selection asks of `type`, merged by response key as graphql-js merges them. */
  collect(
    type: GraphQLObjectType,
    selections: readonly SelectionSetNode[],
    into = new Map<string, FieldNode[]>(),
    seen = new Set<string>(),
  ) {
    for (const set of selections) {
      for (const selection of set.selections) {
        if (!this.included(selection)) continue;
        if (selection.kind === Kind.FIELD) {
          const key = selection.alias?.value ?? selection.name.value;
          into.set(key, [...(into.get(key) ?? []), selection]);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          if (this.applies(selection.typeCondition?.name.value, type)) this.collect(type, [selection.selectionSet], into, seen);
        } else {
          const fragment = this.fragments[selection.name.value];
          if (!fragment || seen.has(fragment.name.value) || !this.applies(fragment.typeCondition.name.value, type)) continue;
          seen.add(fragment.name.value);
          this.collect(type, [fragment.selectionSet], into, seen);
        }
      }
    }
    return into;
  }

  private included(node: Parameters<typeof getDirectiveValues>[1]): boolean {
    if (getDirectiveValues(GraphQLSkipDirective, node, this.variables)?.if === true) return false;
    return getDirectiveValues(GraphQLIncludeDirective, node, this.variables)?.if !== false;
  }

  private applies(condition: string | undefined, type: GraphQLObjectType): boolean {
    if (!condition || condition === type.name) return true;
    const conditionType = this.schema.getType(condition);
    return Boolean(conditionType && isAbstractType(conditionType) && this.schema.isSubType(conditionType, type));
  }

  private subfields(type: GraphQLObjectType, nodes: FieldNode[]) {
    return this.collect(
      type,
      nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : [])),
    );
  }

  private args(field: GraphQLField<unknown, unknown>, node: FieldNode): Record<string, unknown> {
    return getArgumentValues(field, node, this.variables);
  }

  operation(root: GraphQLObjectType, selection: SelectionSetNode): ReadPlan {
    const fields: ReadPlan['fields'] = [];
    for (const [key, nodes] of this.collect(root, [selection])) {
      const name = nodes[0]!.name.value;
      if (name === '__typename') {
        fields.push([key, { kind: 'constant', json: JSON.stringify(root.name) }]);
        continue;
      }
      const field = root.getFields()[name];
      if (!field || !this.authorized(field, true)) throw new NotCompilable();
      const item = field.extensions?.[COMPILED_ITEM] as CompiledItem | undefined;
      if (item) {
        const type = getNullableType(field.type);
        if (!isObjectType(type)) throw new NotCompilable();
        const query = listQuery(item(this.args(field, nodes[0]!), this.ctx));
        fields.push([key, { kind: 'item', query, node: this.node(field, nodes, String(type.extensions?.pothosPrismaModel)) }]);
      } else fields.push([key, { kind: 'page', page: this.page(field, nodes) }]);
    }
    return { fields };
  }

  /** Only the root's own `authenticated` scope, which every request that got this far has passed. */
  private authorized(field: GraphQLField<unknown, unknown>, root = false): boolean {
    const scopes = authScopesOf(field);
    if (scopes === undefined) return !root;
    return (
      root && typeof scopes === 'object' && scopes !== null && Object.keys(scopes).join() === 'authenticated' && Boolean(this.ctx.user)
    );
  }

  /** A connection declared with compiledConnection, read as a forward page without a cursor. */
  private page(field: GraphQLField<unknown, unknown>, nodes: FieldNode[]): Page {
    const options = connectionOf(field);
    if (!options) throw new NotCompilable();
    const model = connectionModel(field);
    const args = this.args(field, nodes[0]!);
    const query = listQuery(typeof options.query === 'function' ? options.query(args, this.ctx) : (options.query ?? {}));
    if (args.before != null || args.last != null) throw new NotCompilable();
    const after = args.after == null ? undefined : cursorValue(args.after);
    const first = args.first as number | null | undefined;
    if (first != null && first < 0) throw new NotCompilable();
    const size = Math.min(first ?? options.defaultSize ?? DEFAULT_PAGE, options.maxSize ?? MAX_PAGE);
    const connection = getNullableType(field.type);
    if (!isObjectType(connection)) throw new NotCompilable();

    const fields: Page['fields'] = [];
    for (const [key, parts] of this.subfields(connection, nodes)) {
      const name = parts[0]!.name.value;
      const part = connection.getFields()[name];
      if (name === '__typename') fields.push([key, { kind: 'constant', json: JSON.stringify(connection.name) }]);
      else if (name === 'totalCount' && options.totalCount) fields.push([key, { kind: 'totalCount' }]);
      else if (name === 'edges' && part) fields.push([key, this.edges(part, parts, model)]);
      else if (name === 'pageInfo' && part) fields.push([key, this.pageInfo(part, parts)]);
      else throw new NotCompilable();
    }
    return { model, query, size, cursorField: options.cursor, fields, ...(after === undefined ? {} : { after }) };
  }

  private edges(field: GraphQLField<unknown, unknown>, nodes: FieldNode[], model: string): ConnectionPart {
    const edge = getNamedType(field.type);
    if (!isObjectType(edge)) throw new NotCompilable();
    const fields: [string, EdgePart][] = [];
    for (const [key, parts] of this.subfields(edge, nodes)) {
      const name = parts[0]!.name.value;
      if (name === '__typename') fields.push([key, { kind: 'constant', json: JSON.stringify(edge.name) }]);
      else if (name === 'cursor') fields.push([key, { kind: 'cursor' }]);
      else if (name === 'node') fields.push([key, { kind: 'node', node: this.node(edge.getFields().node!, parts, model) }]);
      else throw new NotCompilable();
    }
    return { kind: 'edges', fields };
  }

  private pageInfo(field: GraphQLField<unknown, unknown>, nodes: FieldNode[]): ConnectionPart {
    const info = getNamedType(field.type);
    if (!isObjectType(info)) throw new NotCompilable();
    const fields: [string, PageInfoPart | { constant: string }][] = [];
    for (const [key, parts] of this.subfields(info, nodes)) {
      const name = parts[0]!.name.value;
      if (name === '__typename') fields.push([key, { constant: JSON.stringify(info.name) }]);
      else if (PAGE_INFO.includes(name)) fields.push([key, name as PageInfoPart]);
      else throw new NotCompilable();
    }
    return { kind: 'pageInfo', fields };
  }

  /** The selection of one row of `model`, through the object type Pothos made for it. */
  private node(field: GraphQLField<unknown, unknown>, nodes: FieldNode[], model: string): Node {
    const type = getNamedType(field.type);
    if (!isObjectType(type) || type.extensions?.pothosPrismaModel !== model) throw new NotCompilable();
    if ((type.extensions?.pothosOptions as { authScopes?: unknown } | undefined)?.authScopes !== undefined) throw new NotCompilable();
    const fields: Node['fields'] = [];
    for (const [key, parts] of this.subfields(type, nodes)) {
      const name = parts[0]!.name.value;
      if (name === '__typename') {
        fields.push([key, { kind: 'constant', json: JSON.stringify(type.name) }]);
        continue;
      }
      const child = type.getFields()[name];
      if (!child || !this.authorized(child)) throw new NotCompilable();
      fields.push([key, this.value(child, parts)]);
    }
    return { model, fields };
  }

  private value(field: GraphQLField<unknown, unknown>, nodes: FieldNode[]): Value {
    const extensions = field.extensions ?? {};
    const declared = extensions[COMPILED_VALUE] as Value | undefined;
    if (declared) return declared;
    const named = getNamedType(field.type);
    const isList = getNullableType(field.type) !== named;
    const exposed = extensions.pothosExposedField;
    if (typeof exposed === 'string' && !isList && field.args.length === 0) {
      // An enum whose values are stored under other names would need a mapping; ours are stored as named.
      const storedAsNamed = isEnumType(named) && named.getValues().every((v) => v.value === v.name);
      const form = storedAsNamed ? 'string' : isScalarType(named) ? SCALAR_FORMS[named.name] : undefined;
      if (form) return { kind: 'scalar', field: exposed, form };
    }
    // Pothos records the data model's field of a relation.
    const relation = (extensions.pothosPrismaRelationField as { name?: unknown } | undefined)?.name;
    if (typeof relation === 'string' && field.args.length === 0 && isObjectType(named) && !isList) {
      return { kind: 'relation', field: relation, node: this.node(field, nodes, String(named.extensions?.pothosPrismaModel)) };
    }
    if (typeof relation === 'string' && connectionOf(field)) return { kind: 'connection', field: relation, page: this.page(field, nodes) };
    throw new NotCompilable();
  }
}

/**
 * The read plan of `operationName` in `document` with these variables (coerced to their types), or null
 * when the operation must run the ordinary way (not a query, or a part the plan cannot say, or arguments
 * the ordinary way refuses).
 */
export function planOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
  ctx: GraphQLContext,
): ReadPlan | null {
  const operation = getOperationAST(document, operationName);
  const root = schema.getQueryType();
  if (!operation || operation.operation !== 'query' || !root) return null;
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  try {
    return new Planner(schema, fragments, variables, ctx).operation(root, operation.selectionSet);
  } catch {
    // Not compilable, or an argument or filter the ordinary path will refuse with its own error.
    return null;
  }
}
