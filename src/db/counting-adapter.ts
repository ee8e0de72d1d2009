import type { SqlDriverAdapter, SqlDriverAdapterFactory, Transaction } from '@prisma/driver-adapter-utils';

// Counts the statements Prisma sends by wrapping its driver adapter: one call per statement, and none of
// the parameter copying that Prisma's query events do. A transaction's start counts as one (its BEGIN).
// Prisma sends COMMIT and ROLLBACK through the transaction's executeRaw, except to adapters whose
// transactions use "phantom" queries (PGlite), which end them inside commit() and rollback().

type Method = (...args: any[]) => any;
type Overrides = Record<string, (original: Method, args: unknown[]) => unknown>;

export function countingAdapterFactory(factory: SqlDriverAdapterFactory, onStatement: () => void): SqlDriverAdapterFactory {
  const statement = (original: Method, args: unknown[]) => {
    onStatement();
    return original(...args);
  };
  const adapter: Overrides = {
    queryRaw: statement,
    executeRaw: statement,
    executeScript: statement,
    startTransaction: async (original, args) => {
      onStatement();
      const tx: Transaction = await original(...args);
      const ends: Overrides = tx.options.usePhantomQuery ? { commit: statement, rollback: statement } : {};
      return override(tx, { queryRaw: statement, executeRaw: statement, ...ends });
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
