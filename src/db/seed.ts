import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { named } from './prisma-names.js';
import { projectRoot } from './paths.js';

// What the database itself needs to be usable: the agent templates agents are made from. Demo data,
// which goes through the services' rules, is src/demo/.

type TemplateSeed = Omit<Prisma.AgentTemplateCreateInput, 'agents'>;

/** Adds the seeded agent templates that are missing; templates an administrator changed stay as they are. */
export async function seedAgentTemplates(db: PrismaClient): Promise<number> {
  const seeds = JSON.parse(await readFile(join(projectRoot, 'prisma/seed/agent-templates.json'), 'utf8')) as TemplateSeed[];
  const result = await named('seed.agentTemplates', () => db.agentTemplate.createMany({ data: seeds, skipDuplicates: true }));
  return result.count;
}
