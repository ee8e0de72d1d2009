import { createAgent } from './services/agents/agents.js';
import { listTemplates } from './services/agents/templates.js';
import { grantCredits } from './services/billing/grants.js';
import { createCampaign } from './services/campaigns/campaigns.js';
import { importContacts } from './services/contacts/import.js';
import { serviceContext, type ServiceEnv } from './services/context.js';
import { insertUserIfMissing } from './services/users/store.js';

// Demo data for a first look (`npm start` with SEED_DEMO), made through the same services clients use.

export const DEMO_USER_ID = '5eed0000-0000-4000-8000-000000000001';

const DEMO_CONTACTS = [
  { first_name: 'Ada', last_name: 'Lovelace', phone_number: '(415) 555-2671', email: 'ada@example.com', company: 'Analytical Engines' },
  { first_name: 'Grace', last_name: 'Hopper', phone_number: '+1 212 555 0143', email: 'grace@example.com', company: 'Compilers Inc' },
  {
    first_name: 'Alan',
    last_name: 'Turing',
    phone_number: '+44 20 7946 0958',
    email: 'alan@example.co.uk',
    company: 'Bletchley Labs',
    timezone: 'Europe/London',
  },
  { first_name: 'Katherine', last_name: 'Johnson', phone_number: '757.555.0199', email: 'katherine@example.com', company: 'Orbital' },
  { first_name: 'Edsger', last_name: 'Dijkstra', phone_number: 'not a number', email: 'edsger@example.nl', company: 'Shortest Path BV' },
];

/**
 * Demo data, created once: a demo user with credits, an agent with a number, a contact group and a
 * draft campaign. Returns false when the demo user was already there.
 */
export async function seedDemo(env: ServiceEnv): Promise<boolean> {
  if (!(await insertUserIfMissing(env.db, DEMO_USER_ID))) return false;
  const ctx = serviceContext(env, { id: DEMO_USER_ID, isAdmin: false });
  // Credits are granted as an administrator would grant them.
  const admin = serviceContext(env, { id: DEMO_USER_ID, isAdmin: true });

  const template = (await listTemplates(ctx)).find((t) => t.templateKey === 'appointment_setter');
  if (!template) throw new Error('The seeded template appointment_setter is missing or inactive.');
  const agent = await createAgent(ctx, {
    template_id: template.id,
    name: 'Demo appointment setter',
    phone_number: '+14155550100',
    phone_number_label: 'Main line',
    variables: { agent_name: 'Sam', company_name: 'Acme Dental', meeting_type: 'check-up' },
  });
  const { groupId } = await importContacts(ctx, {
    group_name: 'Demo leads',
    description: 'A few sample contacts',
    csv_data: DEMO_CONTACTS.map((row) => ({ ...row })),
  });
  await createCampaign(ctx, {
    agent_id: agent.id,
    contact_group_id: groupId,
    name: 'Demo check-up campaign',
    description: 'Book check-ups with the demo leads',
    timezone: 'America/Los_Angeles',
    concurrent_calls: 2,
    max_retry_days: 2,
    schedule_config: {
      max_attempts: 3,
      max_attempts_per_day: 2,
      retry_interval_minutes: 60,
      retry_on: ['no_answer', 'busy', 'failed', 'voicemail'],
    },
  });
  await grantCredits(admin, { user_id: DEMO_USER_ID, kind: 'included_grant', amount_cents: 1_000n });
  await grantCredits(admin, { user_id: DEMO_USER_ID, kind: 'top_up', amount_cents: 5_000n, description: 'Demo top-up' });
  return true;
}
