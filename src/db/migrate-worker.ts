import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { applyMigrations } from './schema-engine.js';

// Runs in a thread of its own (database.ts migrateInWorker), so that the schema engine's WebAssembly
// ends with the thread rather than staying in the server for its whole life.

/** Applies the migrations to a PostgreSQL database; returns the names applied. */
export default async function migrate({ url }: { url: string }): Promise<string[]> {
  // Migrations take a session advisory lock; a pool of their own, ended when they finish, lets it go.
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  try {
    return await applyMigrations(new PrismaPg(pool));
  } finally {
    await pool.end();
  }
}
