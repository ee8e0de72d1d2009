import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { createAgent } from '../services/agents.js';
import { serviceContext, type ServiceEnv } from '../services/context.js';
import { toE164 } from '../services/phone.js';
import { projectRoot } from './schema-engine.js';

type TemplateSeed = Omit<Prisma.AgentTemplateCreateInput, 'agents'>;

/** Adds the seeded agent templates that are missing; templates an administrator changed stay as they are. */
export async function seedAgentTemplates(db: PrismaClient): Promise<number> {
  const seeds = JSON.parse(
    await readFile(join(projectRoot, 'prisma/seed/agent-templates.json'), 'utf8'),
  ) as TemplateSeed[];
  const result = await db.agentTemplate.createMany({ data: seeds, skipDuplicates: true });
  return result.count;
}

export const DEMO_USER_ID = '5eed0000-0000-4000-8000-000000000001';

const DEMO_CONTACTS = [
  { first_name: 'Ada', last_name: 'Lovelace', phone_number: '(415) 555-2671', email: 'ada@example.com', company: 'Analytical Engines' },
  { first_name: 'Grace', last_name: 'Hopper', phone_number: '+1 212 555 0143', email: 'grace@example.com', company: 'Compilers Inc' },
  { first_name: 'Alan', last_name: 'Turing', phone_number: '+44 20 7946 0958', email: 'alan@example.co.uk', company: 'Bletchley Labs', timezone: 'Europe/London' },
  { first_name: 'Katherine', last_name: 'Johnson', phone_number: '757.555.0199', email: 'katherine@example.com', company: 'Orbital' },
  { first_name: 'Edsger', last_name: 'Dijkstra', phone_number: 'not a number', email: 'edsger@example.nl', company: 'Shortest Path BV' },
];

/**
 * Demo data for a first look, created once: a demo user with credits, an agent with a number, a contact
 * group and a draft campaign. Returns false when it was already there.
 */
export async function seedDemo(env: ServiceEnv): Promise<boolean> {
  const { db } = env;
  if (await db.user.findUnique({ where: { id: DEMO_USER_ID }, select: { id: true } })) return false;
  await db.user.create({ data: { id: DEMO_USER_ID } });
  const ctx = serviceContext(env, { id: DEMO_USER_ID, isAdmin: false });

  const template = await db.agentTemplate.findUniqueOrThrow({ where: { templateKey: 'appointment_setter' } });
  const agent = await createAgent(ctx, {
    templateId: template.id,
    name: 'Demo appointment setter',
    phoneNumber: '+14155550100',
    phoneNumberLabel: 'Main line',
    variables: { agent_name: 'Sam', company_name: 'Acme Dental', meeting_type: 'check-up' },
  });

  await db.$transaction(async (tx) => {
    const group = await tx.contactGroup.create({
      data: {
        userId: DEMO_USER_ID,
        name: 'Demo leads',
        description: 'A few sample contacts',
        total: DEMO_CONTACTS.length,
        csvHeaders: ['first_name', 'last_name', 'phone_number', 'email', 'company', 'timezone'],
      },
    });
    await tx.contact.createMany({
      data: DEMO_CONTACTS.map(({ phone_number, company, timezone, ...standard }) => {
        const number = toE164(phone_number);
        return {
          userId: DEMO_USER_ID,
          groupId: group.id,
          phoneNumber: number ?? phone_number,
          status: number ? 'active' : 'invalid',
          timezone: timezone ?? null,
          data: { ...standard, phone_number: number ?? phone_number, custom_fields: { company } },
        };
      }),
    });
    await tx.campaign.create({
      data: {
        userId: DEMO_USER_ID,
        agentId: agent.id,
        contactGroupId: group.id,
        name: 'Demo check-up campaign',
        description: 'Book check-ups with the demo leads',
        timezone: 'America/Los_Angeles',
        concurrentCalls: 2,
        maxRetryDays: 2,
        scheduleConfig: { max_attempts: 3, max_attempts_per_day: 2, retry_interval_minutes: 60, retry_on: ['no_answer', 'busy', 'failed', 'voicemail'] },
      },
    });
    const purchased = 5_000n;
    const included = 1_000n;
    await tx.creditAccount.create({
      data: { userId: DEMO_USER_ID, balanceCents: purchased, includedRemainingCents: included },
    });
    await tx.creditTransaction.createMany({
      data: [
        { userId: DEMO_USER_ID, kind: 'included_grant', amountCents: included, balanceAfterCents: 0n, includedAfterCents: included, description: 'Included plan credits' },
        { userId: DEMO_USER_ID, kind: 'top_up', amountCents: purchased, balanceAfterCents: purchased, includedAfterCents: included, description: 'Demo top-up' },
      ],
    });
  });
  return true;
}
