import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../db/schema-engine.js';
import { printSchemaSDL } from '../schema/index.js';

// `npm run schema:print` rewrites the committed schema.graphql from the code.
await writeFile(join(projectRoot, 'schema.graphql'), printSchemaSDL());
console.log('Wrote schema.graphql');
