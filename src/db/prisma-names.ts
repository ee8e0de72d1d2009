import { measured } from './sql.js';

// Prisma's statements get names too: a store wraps each Prisma call it makes, so that metrics and logs
// say which of its reads or writes ran, as they do for its SQL statements.

/** Runs one Prisma call under a statement name (`domain.what`). */
export function named<T>(name: string, send: () => PromiseLike<T>): Promise<T> {
  return measured({ name, text: '', dynamic: true }, async () => send());
}

type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;
/** A row of the services' (and the columns') snake_case keys under Prisma's field names. */
export type CamelKeys<T> = { [K in keyof T as K extends string ? CamelCase<K> : K]: T[K] };

/** Service input keys (`template_key`) as Prisma's fields (`templateKey`), for a store's Prisma writes. */
export function camelKeys<T extends object>(row: T): CamelKeys<T> {
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => [key.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase()), value]),
  ) as CamelKeys<T>;
}
