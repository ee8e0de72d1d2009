import { createReadStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { databaseTarget, openDatabase } from '../db/database.js';
import { ValidationError } from '../services/errors.js';
import { systemClock } from '../services/context.js';
import { importRegistry } from '../services/registries/registries.js';

// `npm run registry:import -- --registry us-dnc --downloaded 2026-11-20 file.txt`: streams a national
// do-not-call registry's download file into DATABASE_URL (or the embedded database, while no server
// holds it) and swaps it in for the registry's copy, whole. For the operator: it needs the database's
// credentials, not a token.
const { values, positionals } = parseArgs({
  options: { registry: { type: 'string' }, downloaded: { type: 'string' }, by: { type: 'string' } },
  allowPositionals: true,
});
if (!values.registry || !values.downloaded || positionals.length !== 1) {
  console.error('usage: npm run registry:import -- --registry us-dnc|ca-dncl|uk-tps|uk-ctps --downloaded YYYY-MM-DD [--by name] <file>');
  process.exit(2);
}

const config = loadConfig();
const db = await openDatabase(databaseTarget(config));
const started = performance.now();
try {
  const copy = await importRegistry(
    { sql: db.sql, clock: systemClock },
    { registry: values.registry.replace(/-/g, '_'), downloaded_on: values.downloaded },
    createReadStream(positionals[0]!, { highWaterMark: 1 << 20 }),
    values.by ?? `cli:${process.env.USER ?? 'unknown'}`,
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${copy.registry}: ${copy.numbers} numbers downloaded on ${values.downloaded}, in force now ` +
      `(${seconds.toFixed(1)} s, ${Math.round(Number(copy.numbers) / seconds)} numbers/s; ${copy.areaCodes.length} area codes or prefixes).`,
  );
} catch (error) {
  if (!(error instanceof ValidationError)) throw error;
  for (const [field, messages] of Object.entries(error.fieldErrors)) for (const message of messages) console.error(`${field}: ${message}`);
  console.error('Nothing was changed.');
  process.exitCode = 1;
} finally {
  await db.close();
}
