import { embeddedTemplatePath, writeEmbeddedTemplate } from '../db/embedded-template.js';

// Run by `npm install` (postinstall): makes the migrated embedded database that a first `npm start`
// unpacks instead of creating one. Without it the service still starts, only slower, so a failure here
// is reported and does not fail the install.
try {
  await writeEmbeddedTemplate();
  console.log(`Prepared the embedded database template (${embeddedTemplatePath}).`);
} catch (error) {
  console.warn(`Could not prepare the embedded database template; the first start will create the database itself: ${String(error)}`);
}
