import { randomBytes } from 'node:crypto';
import type { Sql } from '../db/sql.js';

/**
 * A signing secret read once per database and kept for the process. `read` finds the named secret in
 * signing_keys through its domain's store, making it from the random bytes given when there is none yet,
 * so every instance signs with what the first one made. A failed read is forgotten: the next use tries again.
 */
export function cachedSecret(read: (sql: Sql, fresh: Buffer) => Promise<Buffer>): (sql: Sql) => Promise<Buffer> {
  const secrets = new WeakMap<Sql, Promise<Buffer>>();
  return (sql) => {
    let secret = secrets.get(sql);
    if (!secret) {
      secret = read(sql, randomBytes(32));
      secrets.set(sql, secret);
      secret.catch(() => secrets.delete(sql));
    }
    return secret;
  };
}
