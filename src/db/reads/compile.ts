import type { SqlField } from '../sql-model-types.js';
import type { ConnectionPart, Node, Page, ReadPlan, ScalarForm, Value } from './plan.js';
import { columnOf, ident, literal, modelOf, orderSql, Params, Unsupported, whereSql } from './where.js';

// A read plan as one SQL statement whose one row holds the answer's `data` as JSON text, built by
// PostgreSQL byte for byte as graphql-js and JSON.stringify would write it: objects and lists by
// concatenation (json_build_object would add spaces), strings escaped by to_json, dates as
// Date.toISOString writes them (row_to_json and json_agg were measured: no cheaper, see docs/decisions.md).
// Related rows come from correlated subqueries, each page read through its index and cut at its size, or at
// size + 1 when the query asks whether another page follows.

export interface CompiledRead {
  text: string;
  values: unknown[];
}

/** Pieces of a JSON text: fixed text, or an SQL expression that yields text. */
class Json {
  private parts: { sql?: string; text?: string }[] = [];
  text(text: string): this {
    const last = this.parts.at(-1);
    if (last?.text !== undefined) last.text += text;
    else this.parts.push({ text });
    return this;
  }
  sql(expression: string): this {
    this.parts.push({ sql: expression });
    return this;
  }
  object(entries: [key: string, add: (json: Json) => void][]): this {
    this.text('{');
    entries.forEach(([key, add], i) => {
      this.text(`${i ? ',' : ''}${JSON.stringify(key)}:`);
      add(this);
    });
    return this.text('}');
  }
  toSql(): string {
    return this.parts.map((p) => (p.sql !== undefined ? p.sql : literal(p.text!))).join(' || ');
  }
}

const orNull = (expression: string) => `coalesce(${expression}, 'null')`;

/** The data model's types whose stored value each form writes as the GraphQL scalar would. */
const FORM_TYPES: Record<ScalarForm, readonly string[]> = {
  string: ['String'],
  number: ['Int'],
  boolean: ['Boolean'],
  datetime: ['DateTime'],
};

function scalarSql(field: Extract<SqlField, { column: string }>, alias: string, form: ScalarForm): string {
  if (!(field.kind === 'enum' ? form === 'string' : FORM_TYPES[form].includes(field.type)))
    throw new Unsupported(`${field.type} as ${form}`);
  const column = `${alias}.${ident(field.column)}`;
  switch (form) {
    case 'string':
      return orNull(`to_json(${column})::text`);
    case 'number':
    case 'boolean':
      return orNull(`${column}::text`);
    case 'datetime': {
      // Prisma keeps instants in UTC whichever the column's type.
      const utc = field.native === 'Timestamptz' ? `${column} AT TIME ZONE 'UTC'` : column;
      return orNull(`'"' || to_char(${utc}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'`);
    }
  }
}

type RelationField = Extract<SqlField, { kind: 'relation' }>;

/**
 * The key pairs (holder's field, target's field) by which a row holding `keys` finds the `target` row it
 * points at. The schema keeps Prisma's foreign keys in the database, so a required relation's row points
 * at exactly one target row: when the keys include the target's id, the id's pairs alone find it and the
 * others hold by the key. Comparing them too (a contact's owner with its group's) let PostgreSQL read a
 * page of a group's contacts through a bitmap of the owner's index and sort the whole group after the
 * cursor, instead of scanning the group's index in the page's order and stopping at the page.
 */
function keyPairs(keys: RelationField, target: string): [from: string, to: string][] {
  const pairs = keys.from.map((field, i): [string, string] => [field, keys.to[i]!]);
  const id = modelOf(target).idFields;
  const byId = pairs.filter(([, to]) => id.includes(to));
  return keys.isRequired && id.length && byId.length === id.length ? byId : pairs;
}

/** The SQL condition joining the rows of `relationField` (on `parentModel`, rows `parent`) to `child`. */
function joinSql(parentModel: string, relationField: string, parent: string, child: string): { model: string; condition: string } {
  const relation = modelOf(parentModel).fields[relationField];
  if (!relation || relation.kind !== 'relation') throw new Unsupported(`no relation ${parentModel}.${relationField}`);
  const pairs = (fromModel: string, keys: RelationField, toModel: string, fromAlias: string, toAlias: string) =>
    keyPairs(keys, toModel)
      .map(([from, to]) => `${toAlias}.${ident(columnOf(toModel, to).column)} = ${fromAlias}.${ident(columnOf(fromModel, from).column)}`)
      .join(' AND ');
  if (relation.from.length) {
    return { model: relation.model, condition: pairs(parentModel, relation, relation.model, parent, child) };
  }
  // The keys are on the other side: the field of the related model that names the same relation.
  const opposite = Object.entries(modelOf(relation.model).fields).find(
    ([name, f]) =>
      f.kind === 'relation' &&
      f.relationName === relation.relationName &&
      f.from.length &&
      !(relation.model === parentModel && name === relationField),
  )?.[1];
  if (!opposite || opposite.kind !== 'relation') throw new Unsupported(`no keys for ${parentModel}.${relationField}`);
  return { model: relation.model, condition: pairs(relation.model, opposite, parentModel, child, parent) };
}

function nodeJson(json: Json, node: Node, alias: string, params: Params): Json {
  return json.object(node.fields.map(([key, value]) => [key, (j) => valueJson(j, node.model, value, alias, params)]));
}

function valueJson(json: Json, model: string, value: Value, alias: string, params: Params): void {
  switch (value.kind) {
    case 'constant':
      json.text(value.json);
      return;
    case 'scalar':
      json.sql(scalarSql(columnOf(model, value.field), alias, value.form));
      return;
    case 'jsonText':
      json.sql(orNull(`to_json(${alias}.${ident(columnOf(model, value.field).column)} ->> ${literal(value.key)})::text`));
      return;
    case 'relation': {
      const child = params.alias();
      const { model: target, condition } = joinSql(model, value.field, alias, child);
      const row = nodeJson(new Json(), value.node, child, params).toSql();
      json.sql(orNull(`(SELECT ${row} FROM ${ident(modelOf(target).table)} ${child} WHERE ${condition})`));
      return;
    }
    case 'connection':
      json.sql(pageSql(value.page, params, { model, field: value.field, alias }));
  }
}

const cursorSql = (field: Extract<SqlField, { column: string }>, alias: string) => {
  // The cursor Pothos writes for a text field: base64 of `GPC:S:` and the value.
  if (field.type !== 'String') throw new Unsupported('cursor');
  return `translate(encode(convert_to('GPC:S:' || ${alias}.${ident(field.column)}::text, 'UTF8'), 'base64'), E'\\n', '')`;
};

/**
 * The rows from the cursor's row on in the page's order, as Prisma's cursor reads them: the order's
 * columns as one row value compared with the cursor row's (no row, no rows). Pothos then skips one row,
 * the cursor's own, or the first of the others when the cursor's row is not among them. The order must
 * run one way and end with the cursor field, which makes it total.
 */
function afterSql(page: Page, alias: string, params: Params): string {
  const terms = list(page.query.orderBy).map((entry) => Object.entries(entry as Record<string, string>)[0]!);
  const directions = new Set(terms.map(([, direction]) => direction));
  if (directions.size !== 1 || terms.at(-1)?.[0] !== page.cursorField) throw new Unsupported('cursor order');
  const columns = (a: string) => terms.map(([field]) => `${a}.${ident(columnOf(page.model, field).column)}`).join(', ');
  const cursorField = columnOf(page.model, page.cursorField);
  // A cursor that cannot name a row of a uuid column is the resolvers' error to answer, not a failed statement.
  if (cursorField.native === 'Uuid' && !UUID.test(page.after ?? '')) throw new Unsupported('cursor value');
  const at = params.alias();
  const cursorColumn = `${at}.${ident(cursorField.column)}`;
  const from = `SELECT ${columns(at)} FROM ${ident(modelOf(page.model).table)} ${at} WHERE ${cursorColumn} = ${params.add(page.after)}`;
  return `(${columns(alias)}) ${directions.has('asc') ? '>=' : '<='} (${from})`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const list = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** A page of rows as a connection object; `parent` when the rows are a relation of a row. */
function pageSql(page: Page, params: Params, parent?: { model: string; field: string; alias: string }): string {
  const rowsOf = (alias: string) => {
    if (!parent) return { table: modelOf(page.model).table, condition: whereSql(page.model, alias, page.query.where, params) };
    const join = joinSql(parent.model, parent.field, parent.alias, alias);
    if (join.model !== page.model) throw new Unsupported('connection model');
    return {
      table: modelOf(page.model).table,
      condition: `${join.condition} AND ${whereSql(page.model, alias, page.query.where, params)}`,
    };
  };
  const parts = page.fields.map(([, part]) => part);
  const edges = parts.find((p): p is Extract<ConnectionPart, { kind: 'edges' }> => p.kind === 'edges');
  const info = parts.flatMap((p) => (p.kind === 'pageInfo' ? p.fields.map(([, i]) => i) : []));
  // Page info that is all constants (hasPreviousPage is one) reads no rows.
  const needsRows = edges !== undefined || info.some((i) => typeof i === 'string' && i !== 'hasPreviousPage');
  const cursorField = columnOf(page.model, page.cursorField);
  // What only some pages ask for is read only by them: the row past the page (hasNextPage), the rows'
  // positions (start and end cursors, and which rows are in the page) and their cursors.
  const pastPage = info.includes('hasNextPage');
  const positions = pastPage || info.includes('startCursor') || info.includes('endCursor');
  const cursors = positions || (edges?.fields.some(([, part]) => part.kind === 'cursor') ?? false);

  // One parameter for the size, so that the text stays the same whatever page is asked for; added only
  // when the rows are read, as PostgreSQL cannot type a parameter no expression uses.
  const size = needsRows ? `${params.add(page.size)}::int` : '';
  let from = '';
  if (needsRows) {
    const row = params.alias();
    const { table, condition } = rowsOf(row);
    const order = orderSql(page.model, row, page.query.orderBy);
    const orderBy = order.length ? `ORDER BY ${order.join(', ')}` : '';
    const after = page.after === undefined ? '' : ` AND ${afterSql(page, row, params)}`;
    const skipped = page.after === undefined ? '' : ' - 1';
    const columns: string[] = [];
    if (positions) columns.push(`row_number() OVER (${orderBy})${skipped} AS ord`);
    if (cursors) columns.push(`${cursorSql(cursorField, row)} AS cursor`);
    if (edges) {
      const edge = new Json().object(
        edges.fields.map(([key, part]) => [
          key,
          (j) => {
            if (part.kind === 'constant') j.text(part.json);
            else if (part.kind === 'cursor') j.sql(`to_json(${cursorSql(cursorField, row)})::text`);
            else nodeJson(j, part.node, row, params);
          },
        ]),
      );
      columns.push(`${edge.toSql()} AS edge`);
    }
    const limit = `LIMIT ${size}${pastPage ? ' + 1' : ''}${page.after === undefined ? '' : ' OFFSET 1'}`;
    from = ` FROM (SELECT ${columns.join(', ')} FROM ${ident(table)} ${row} WHERE ${condition}${after} ${orderBy} ${limit}) page`;
  }

  // The page's rows, without the one read past it.
  const inPage = (also?: string) => {
    const conditions = [...(also ? [also] : []), ...(pastPage ? [`page.ord <= ${size}`] : [])];
    return conditions.length ? ` FILTER (WHERE ${conditions.join(' AND ')})` : '';
  };
  const json = new Json().object(
    page.fields.map(([key, part]) => [
      key,
      (j) => {
        switch (part.kind) {
          case 'constant':
            j.text(part.json);
            return;
          case 'totalCount': {
            const counted = params.alias();
            const { table, condition } = rowsOf(counted);
            j.sql(`(SELECT count(*) FROM ${ident(table)} ${counted} WHERE ${condition})::text`);
            return;
          }
          case 'edges':
            // In the page's order: an aggregate over one ordered subquery takes its rows as they come, and
            // sorting them again here was about a quarter of the statement's time.
            j.text('[').sql(`coalesce(string_agg(page.edge, ',')${inPage()}, '')`).text(']');
            return;
          case 'pageInfo':
            j.object(
              part.fields.map(([infoKey, info]) => [
                infoKey,
                (k) => {
                  if (typeof info === 'object') k.text(info.constant);
                  else if (info === 'hasNextPage') k.sql(`(count(*) > ${size})::text`);
                  // As Pothos answers a forward page: there is one before it exactly when it starts after a cursor.
                  else if (info === 'hasPreviousPage') k.text(page.after === undefined ? 'false' : 'true');
                  else if (info === 'startCursor') k.sql(orNull(`to_json(min(page.cursor)${inPage('page.ord = 1')})::text`));
                  // The page's last: no aggregate here may ask for an order, which PostgreSQL 16 on would
                  // give every aggregate of the page, edges included, by sorting the rows first.
                  else k.sql(orNull(`to_json((array_agg(page.cursor)${inPage()})[(count(*)${inPage()})::int])::text`));
                },
              ]),
            );
        }
      },
    ]),
  );
  return `(SELECT ${json.toSql()}${from})`;
}

/**
 * The statement answering a whole plan: its one row's `data` is the answer's `data` object, and `missing`
 * says that a root field asking for one row found none.
 */
export function compileRead(plan: ReadPlan): CompiledRead {
  const params = new Params();
  const roots: string[] = [];
  const items: string[] = [];
  const json = new Json().object(
    plan.fields.map(([key, value]) => [
      key,
      (j) => {
        if (value.kind === 'constant') return void j.text(value.json);
        const column = `r${roots.length}`;
        if (value.kind === 'page') roots.push(`${pageSql(value.page, params)} AS ${column}`);
        else {
          const row = params.alias();
          const node = nodeJson(new Json(), value.node, row, params).toSql();
          const where = whereSql(value.node.model, row, value.query.where, params);
          roots.push(`(SELECT ${node} FROM ${ident(modelOf(value.node.model).table)} ${row} WHERE ${where} LIMIT 1) AS ${column}`);
          items.push(`roots.${column} IS NULL`);
        }
        j.sql(orNull(`roots.${column}`));
      },
    ]),
  );
  const missing = items.length ? items.join(' OR ') : 'false';
  // Materialized: a subquery in FROM is pulled up into the SELECT, and a root's subquery named both in
  // `data` and in `missing` then ran twice.
  const select = `SELECT ${json.toSql()} AS data, ${missing} AS missing`;
  const text = roots.length ? `WITH roots AS MATERIALIZED (SELECT ${roots.join(', ')}) ${select} FROM roots` : select;
  return { text, values: params.values };
}
