import { statement, type Sql } from '../../db/sql.js';

// The exports store: the only module of the domain that talks to the database.

const insertStatement = statement(
  'exports.insertSigningKey',
  `INSERT INTO signing_keys (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
);
const readStatement = statement<{ secret: Uint8Array }>('exports.signingKey', `SELECT secret FROM signing_keys WHERE name = $1`);

/** The secret named `name`, made from `candidate` when there is none yet; every instance reads the same. */
export async function signingSecret(sql: Sql, name: string, candidate: Buffer): Promise<Buffer> {
  await sql.run(insertStatement, [name, candidate]);
  const [row] = await sql.run(readStatement, [name]);
  return Buffer.from(row!.secret);
}
