import { measured } from './sql.js';

// Prisma's statements get names too: a store wraps each Prisma call it makes, so that metrics and logs
// say which of its reads or writes ran, as they do for its SQL statements.

/** Runs one Prisma call under a statement name (`domain.what`). */
export function named<T>(name: string, send: () => PromiseLike<T>): Promise<T> {
  return measured({ name, text: '', dynamic: true }, async () => send());
}
