import { loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { demoTemplatePath, embeddedTemplatePath, writeEmbeddedTemplate } from '../db/embedded-template.js';
import { seedAgentTemplates } from '../db/seed.js';
import { writeDemoTemplate } from '../demo/template.js';
import { prepareJobQueues } from '../jobs/process-jobs.js';
import { createLogger } from '../logger.js';

// Run by `npm install` (postinstall): makes the migrated embedded database, with the job engine's schema
// and queues and the agent templates, that a first `npm start` copies instead of creating one, and a copy
// of it with the demo data. Without them the service still starts, only slower, so a failure here is
// reported and does not fail the install.
const log = createLogger('warn');
try {
  await writeEmbeddedTemplate(undefined, async (pglite) => {
    // The template's own instance: closing it is the template writer's.
    const db = await openDatabase({ kind: 'pglite', instance: pglite });
    await prepareJobQueues(log, db);
    await seedAgentTemplates(db);
  });
  console.log(`Prepared the embedded database template (${embeddedTemplatePath}).`);
} catch (error) {
  console.warn(`Could not prepare the embedded database template; a first start will create the database itself: ${String(error)}`);
  process.exit(0);
}
try {
  // The settings the demo's prices come from are those of the install's environment.
  await writeDemoTemplate(loadConfig().settings, log);
  console.log(`Prepared the embedded database template with demo data (${demoTemplatePath}).`);
} catch (error) {
  console.warn(`Could not prepare the template with demo data; a first start will seed the demo itself: ${String(error)}`);
}
