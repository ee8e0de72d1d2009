// The one rule for key styles. The services read inputs and store JSON in snake_case (`group_name`, as v1
// spells them); GraphQL's public names and Prisma's fields are camelCase. Every translation between the two
// goes through these, at the top level of an object only: nested values (a CSV row, a JSON column) are
// the client's own data.

/** `groupName` -> `group_name`. */
export const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** `group_name` -> `groupName`. */
export const camelCase = (name: string) => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());

type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;
export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;

export type SnakeKeys<T> = { [K in keyof T as K extends string ? SnakeCase<K> : K]: T[K] };
export type CamelKeys<T> = { [K in keyof T as K extends string ? CamelCase<K> : K]: T[K] };

/** A camelCase object (GraphQL filters, the v1 import body) under the services' names. */
export function snakeKeys<T extends object>(value: T): SnakeKeys<T> {
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [snakeCase(key), inner])) as SnakeKeys<T>;
}

/** Service keys (`template_key`) as Prisma's fields (`templateKey`), for a store's Prisma writes. */
export function camelKeys<T extends object>(value: T): CamelKeys<T> {
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [camelCase(key), inner])) as CamelKeys<T>;
}
