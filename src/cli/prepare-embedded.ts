import { openDatabase } from '../db/database.js';
import { embeddedTemplatePath, writeEmbeddedTemplate } from '../db/embedded-template.js';
import { prepareJobQueues } from '../jobs/process-jobs.js';
import { createLogger } from '../logger.js';

// Run by `npm install` (postinstall): makes the migrated embedded database, with the job engine's schema
// and queues, that a first `npm start` copies instead of creating one. Without it the service still
// starts, only slower, so a failure here is reported and does not fail the install.
try {
  await writeEmbeddedTemplate(undefined, async (pglite) => {
    // The template's own instance: closing it is the template writer's.
    await prepareJobQueues(createLogger('warn'), await openDatabase({ kind: 'pglite', instance: pglite }));
  });
  console.log(`Prepared the embedded database template (${embeddedTemplatePath}).`);
} catch (error) {
  console.warn(`Could not prepare the embedded database template; the first start will create the database itself: ${String(error)}`);
}
