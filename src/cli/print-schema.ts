import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../db/paths.js';
import { printSchemaSDL } from '../schema/index.js';
import { webhookEventsDocument } from '../services/webhooks/events.js';

// `npm run schema:print` rewrites the committed schemas from the code: schema.graphql, and the JSON
// Schemas of the webhook events.
await writeFile(join(projectRoot, 'schema.graphql'), printSchemaSDL());
await mkdir(join(projectRoot, 'docs/webhooks'), { recursive: true });
await writeFile(join(projectRoot, 'docs/webhooks/events.json'), webhookEventsDocument());
console.log('Wrote schema.graphql and docs/webhooks/events.json');
