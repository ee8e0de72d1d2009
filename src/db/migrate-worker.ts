import { PrismaPg } from '@prisma/adapter-pg';
import { DriverAdapterError } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { applyMigrations } from './schema-engine.js';

// Runs in a thread of its own (database.ts migrateInWorker), so that the schema engine's WebAssembly
// ends with the thread rather than staying in the server for its whole life.

/** Applies the migrations to a PostgreSQL database; returns the names applied. */
export default async function migrate({ url }: { url: string }): Promise<string[]> {
  // Migrations take a session advisory lock; a pool of their own, ended when they finish, lets it go.
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  try {
    return await applyMigrations(wholeScripts(new PrismaPg(pool), pool));
  } finally {
    await pool.end();
  }
}

/**
 * node-postgres's adapter cuts a migration script at every `;`, which breaks a function body in two.
 * PostgreSQL takes the script whole, as one simple query, which is how `prisma migrate deploy` sends it.
 */
function wholeScripts(factory: PrismaPg, pool: pg.Pool): PrismaPg {
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = await connect();
    adapter.executeScript = async (script) => {
      try {
        await pool.query(script);
      } catch (error) {
        if (!(error instanceof pg.DatabaseError)) throw error;
        const { code = '', severity = 'ERROR', message, detail, column, hint } = error;
        throw new DriverAdapterError({ kind: 'postgres', code, severity, message, detail, column, hint });
      }
    };
    return adapter;
  };
  return factory;
}
