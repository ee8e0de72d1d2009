import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { named } from './prisma-names.js';
import { projectRoot } from './paths.js';
import { statement, type Sql } from './sql.js';

// What the database itself needs to be usable: the agent templates agents are made from. Demo data,
// which goes through the services' rules, is src/demo/.

type TemplateSeed = Omit<Prisma.AgentTemplateCreateInput, 'agents'>;

const countSeeded = statement<{ count: number }>(
  'seed.countAgentTemplates',
  'SELECT count(*)::int AS count FROM agent_templates WHERE template_key = ANY($1::text[])',
);

/**
 * Adds the seeded agent templates that are missing; templates an administrator changed stay as they are.
 * Every start after the first finds them all, which one plain statement tells: Prisma's first query of a
 * process compiles its query compiler, work a start need not wait for.
 */
export async function seedAgentTemplates(db: { prisma: PrismaClient; sql: Sql }): Promise<number> {
  const seeds = JSON.parse(await readFile(join(projectRoot, 'prisma/seed/agent-templates.json'), 'utf8')) as TemplateSeed[];
  const [seeded] = await db.sql.run(countSeeded, [seeds.map((seed) => seed.templateKey)]);
  if (seeded?.count === seeds.length) return 0;
  const result = await named('seed.agentTemplates', () => db.prisma.agentTemplate.createMany({ data: seeds, skipDuplicates: true }));
  return result.count;
}
