import { sqlModel } from '../../generated/sql-model.js';
import type { SqlField } from '../sql-model-types.js';
import type { ListQuery } from './plan.js';

// The part of Prisma's filter and order language the stores' list queries use, as SQL over one table
// alias. Anything else throws Unsupported, and the operation is answered the ordinary way instead.

export class Unsupported extends Error {}

/** Collects a statement's parameters and hands out table aliases. */
export class Params {
  readonly values: unknown[] = [];
  private aliases = 0;
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  alias(): string {
    this.aliases += 1;
    return `t${this.aliases}`;
  }
}

export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
export const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

export function modelOf(name: string) {
  const model = sqlModel.models[name];
  if (!model) throw new Unsupported(`no model ${name}`);
  return model;
}

export function columnOf(modelName: string, field: string): Extract<SqlField, { column: string }> {
  const found = modelOf(modelName).fields[field];
  if (!found || found.kind === 'relation' || found.kind === 'unsupported' || found.isList)
    throw new Unsupported(`no column ${modelName}.${field}`);
  return found;
}

const COMPARISONS: Record<string, string> = { lt: '<', lte: '<=', gt: '>', gte: '>=' };

function isPlainValue(value: unknown): boolean {
  return value === null || value instanceof Date || ['string', 'number', 'boolean', 'bigint'].includes(typeof value);
}

function fieldCondition(column: string, filter: unknown, params: Params): string[] {
  if (filter === undefined) return [];
  if (filter === null) return [`${column} IS NULL`];
  if (isPlainValue(filter)) return [`${column} = ${params.add(filter)}`];
  if (typeof filter !== 'object' || Array.isArray(filter)) throw new Unsupported('filter');
  const parts: string[] = [];
  for (const [op, value] of Object.entries(filter)) {
    if (value === undefined) continue;
    if (op === 'equals') parts.push(...fieldCondition(column, value, params));
    else if (op === 'not' && value === null) parts.push(`${column} IS NOT NULL`);
    else if (op === 'in' && Array.isArray(value) && value.every(isPlainValue)) parts.push(`${column} = ANY(${params.add(value)})`);
    else if (op in COMPARISONS && value !== null && isPlainValue(value)) parts.push(`${column} ${COMPARISONS[op]} ${params.add(value)}`);
    else throw new Unsupported(`filter ${op}`);
  }
  return parts;
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

/** A Prisma `where` over `alias` as one SQL condition (`true` when it has none). */
export function whereSql(modelName: string, alias: string, where: Record<string, unknown> | undefined, params: Params): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(where ?? {})) {
    if (value === undefined) continue;
    if (key === 'AND') parts.push(...list(value).map((w) => whereSql(modelName, alias, w as Record<string, unknown>, params)));
    else if (key === 'OR') {
      const options = list(value).map((w) => whereSql(modelName, alias, w as Record<string, unknown>, params));
      parts.push(options.length ? `(${options.join(' OR ')})` : 'false');
    } else if (key === 'NOT')
      parts.push(...list(value).map((w) => `NOT (${whereSql(modelName, alias, w as Record<string, unknown>, params)})`));
    else parts.push(...fieldCondition(`${alias}.${ident(columnOf(modelName, key).column)}`, value, params));
  }
  return parts.length ? parts.join(' AND ') : 'true';
}

/** A Prisma `orderBy` over `alias` as SQL ORDER BY terms (nulls where PostgreSQL and Prisma both put them). */
export function orderSql(modelName: string, alias: string, orderBy: ListQuery['orderBy']): string[] {
  return list(orderBy ?? []).map((entry) => {
    const pairs = Object.entries(entry as Record<string, unknown>);
    const [field, direction] = pairs[0] ?? [];
    if (pairs.length !== 1 || (direction !== 'asc' && direction !== 'desc')) throw new Unsupported('orderBy');
    return `${alias}.${ident(columnOf(modelName, field!).column)} ${direction === 'asc' ? 'ASC' : 'DESC'}`;
  });
}
