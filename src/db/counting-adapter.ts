import type { SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery, Transaction } from '@prisma/driver-adapter-utils';
import { tracingOn } from '../ops/tracing.js';
import { prismaStatementSpan } from './statement-spans.js';

// Counts (and, with tracing on, traces) the statements Prisma sends by wrapping its driver adapter: one
// call per statement, and none of the parameter copying that Prisma's query events do. A transaction's
// start counts as one (its BEGIN). Prisma sends COMMIT and ROLLBACK through the transaction's executeRaw,
// except to adapters whose transactions use "phantom" queries (PGlite), which end them inside commit()
// and rollback().

type Method = (...args: any[]) => any;
type Overrides = Record<string, (original: Method, args: unknown[]) => unknown>;

export function countingAdapterFactory(factory: SqlDriverAdapterFactory, onStatement: () => void): SqlDriverAdapterFactory {
  /** A method that sends one statement; its text is the first argument's (a query or a script) unless given. */
  const sends =
    (text?: string) =>
    (original: Method, args: unknown[]): Promise<unknown> => {
      onStatement();
      if (!tracingOn()) return original(...args);
      const query = args[0] as SqlQuery | string;
      return prismaStatementSpan(text ?? (typeof query === 'string' ? query : query.sql), () => original(...args));
    };
  const statement = sends();
  const phantomEnds: Overrides = { commit: sends('COMMIT'), rollback: sends('ROLLBACK') };
  const begin = sends('BEGIN');
  const adapter: Overrides = {
    queryRaw: statement,
    executeRaw: statement,
    executeScript: statement,
    startTransaction: async (original, args) => {
      const tx = (await begin(original, args)) as Transaction;
      return override(tx, { queryRaw: statement, executeRaw: statement, ...(tx.options.usePhantomQuery ? phantomEnds : {}) });
    },
  };
  return override(factory, {
    connect: async (original, args) => override<SqlDriverAdapter>(await original(...args), adapter),
  });
}

/** The object as it is except for the named methods. The adapters are classes, so methods stay bound. */
function override<T extends object>(target: T, overrides: Overrides): T {
  return new Proxy(target, {
    get(object, key) {
      const value = Reflect.get(object, key, object);
      if (typeof value !== 'function') return value;
      const original = value.bind(object) as Method;
      const replacement = typeof key === 'string' ? overrides[key] : undefined;
      return replacement ? (...args: unknown[]) => replacement(original, args) : original;
    },
  });
}
