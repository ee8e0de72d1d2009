import { loadConfig } from '../config.js';
import { databaseTarget, openDatabase } from '../db/database.js';

// `npm run db:migrate`: applies pending migrations to DATABASE_URL, or to the embedded database.
const config = loadConfig();
const db = await openDatabase(databaseTarget(config));
try {
  const applied = await db.migrate();
  console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'The database is up to date.');
} finally {
  await db.close();
}
