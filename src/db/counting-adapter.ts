import type { SqlDriverAdapter, SqlDriverAdapterFactory, Transaction } from '@prisma/driver-adapter-utils';

// Counts the statements Prisma sends by wrapping its driver adapter: one call per statement, and none of
// the parameter copying that Prisma's query events do. A transaction's start counts as one (its BEGIN);
// Prisma sends COMMIT and ROLLBACK through the transaction's executeRaw, so they count too.

type Method = (...args: any[]) => any;
type Overrides = Record<string, (original: Method, args: unknown[]) => unknown>;

export function countingAdapterFactory(factory: SqlDriverAdapterFactory, onStatement: () => void): SqlDriverAdapterFactory {
  const statement = (original: Method, args: unknown[]) => {
    onStatement();
    return original(...args);
  };
  const transaction: Overrides = { queryRaw: statement, executeRaw: statement };
  const adapter: Overrides = {
    ...transaction,
    executeScript: statement,
    startTransaction: async (original, args) => {
      onStatement();
      return override<Transaction>(await original(...args), transaction);
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
