import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Where the project's files are, found from this module's own place: the nearest folder above it with a
// package.json, whether it runs from src/, from dist/ or from the transpiled copy npm start runs (.run/).

function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json above ${from}.`);
  }
}

export const projectRoot = findProjectRoot(dirname(fileURLToPath(import.meta.url)));
export const migrationsDir = join(projectRoot, 'prisma/migrations');
export const schemaPath = join(projectRoot, 'prisma/schema.prisma');
