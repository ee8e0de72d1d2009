import { DateTime } from 'luxon';
import { createAgent } from '../services/agents/agents.js';
import { listTemplates } from '../services/agents/templates.js';
import { grantCredits } from '../services/billing/grants.js';
import { applyStripeEvent } from '../services/billing/stripe.js';
import { createCampaign } from '../services/campaigns/campaigns.js';
import { grantExemption } from '../services/campaigns/exemptions.js';
import { dispatchCampaign } from '../services/campaigns/dispatch.js';
import { importContacts } from '../services/contacts/import.js';
import { serviceContext, type ServiceEnv } from '../services/context.js';
import { SimulatedVoiceProvider } from '../services/voice/providers/simulated/agents.js';
import { provisionAgent } from '../services/voice/provisioning.js';
import { WEEKDAYS } from '../services/calling-rules/schedule.js';
import type { CallResult } from '../services/voice/providers/telephony.js';
import { insertUserIfMissing } from '../services/users/store.js';
import { callThrough, DemoClock, type CallScript } from './calls.js';

// Demo data for a first look (`npm start` with SEED_DEMO), made through the same services clients use,
// so that every v1 endpoint and GraphQL field answers real data on the first start: named contacts, a
// campaign called yesterday with its history, report, charges and a booked appointment, a top-up with
// its receipt, and a draft campaign ready to dispatch.

export const DEMO_USER_ID = '5eed0000-0000-4000-8000-000000000001';

const ZONE = 'America/Los_Angeles';

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
  {
    first_name: 'Margaret',
    last_name: 'Hamilton',
    phone_number: '+1 617 555 0182',
    email: 'margaret@example.com',
    company: 'Apollo Software',
  },
  {
    first_name: 'Barbara',
    last_name: 'Liskov',
    phone_number: '+1 617 555 0117',
    email: 'barbara@example.com',
    company: 'Substitution Labs',
  },
  { first_name: 'Edsger', last_name: 'Dijkstra', phone_number: 'not a number', email: 'edsger@example.nl', company: 'Shortest Path BV' },
];

/** How each demo number answered yesterday's calls (by its last four digits); `when` is the seeding day. */
function yesterdaysCalls(when: DateTime): CallScript {
  const results: Record<string, Omit<CallResult, 'attemptId'>> = {
    '2671': {
      outcome: 'human',
      durationSeconds: 142,
      sentiment: 'positive',
      summary: 'Booked a check-up for Thursday at 10:00.',
      disconnectReason: 'agent_hangup',
      transcript:
        'Agent: Hi Ada, this is Sam from Acme Dental. You are due for a check-up; would you like to book one?\n' +
        'Ada: Yes, please. Is Thursday morning possible?\nAgent: Thursday at 10:00 is free. Shall I book it?\nAda: Perfect, thank you.',
      appointment: {
        scheduledAt: when.plus({ days: 2 }).set({ hour: 10, minute: 0, second: 0, millisecond: 0 }).toJSDate(),
        notes: 'Check-up; prefers mornings.',
      },
    },
    '0143': { outcome: 'voicemail', durationSeconds: 24, messageLeft: true, summary: 'Left a message asking Grace to call back.' },
    '0958': {
      outcome: 'human',
      durationSeconds: 95,
      sentiment: 'neutral',
      summary: 'Happy with the current dentist; no appointment.',
      disconnectReason: 'user_hangup',
    },
    '0199': { outcome: 'no_answer', durationSeconds: 0, summary: 'No answer.', disconnectReason: 'no_answer' },
    '0182': {
      outcome: 'human',
      durationSeconds: 31,
      sentiment: 'negative',
      summary: 'Asked not to be called again.',
      disconnectReason: 'user_hangup',
      doNotCall: true,
    },
    '0117': { outcome: 'busy', durationSeconds: 0, summary: 'The line was busy.', disconnectReason: 'busy' },
  };
  return (call) => results[call.to.slice(-4)] ?? { outcome: 'no_answer', durationSeconds: 0 };
}

/** Every day, every hour: the simulator places no real calls, so the demo may call whenever it is tried. */
const ANY_TIME = { calling_hours: { start: '00:00', end: '24:00' }, active_days: [...WEEKDAYS], regional_rules: false };

/** Created once; returns false when the demo user was already there. */
export async function seedDemo(env: ServiceEnv): Promise<boolean> {
  if (!(await insertUserIfMissing(env.sql, DEMO_USER_ID))) return false;
  // Yesterday's campaign ran a day ago to the minute, on a clock of its own: a demo seeded into the
  // install-time template is moved to the present by one interval on a first start, which keeps a day ago
  // yesterday whatever the hour of either (src/demo/redate.ts).
  const yesterday = DateTime.fromJSDate(env.clock.now(), { zone: ZONE }).minus({ days: 1 }).set({ second: 0, millisecond: 0 });
  const past = { ...env, clock: new DemoClock(yesterday.toJSDate()) };
  const ctx = serviceContext(past, { id: DEMO_USER_ID, isAdmin: false });
  // Credits are granted as an administrator would grant them.
  const admin = serviceContext(past, { id: DEMO_USER_ID, isAdmin: true });

  await grantCredits(admin, { user_id: DEMO_USER_ID, kind: 'included_grant', amount_cents: 1_000n });
  // The demo calls at any hour through the simulator, which calls nobody: an exemption says so, for a year.
  await grantExemption(admin, {
    user_id: DEMO_USER_ID,
    reason: 'Demo account: calls go to the simulator, never to a person.',
    expires_at: yesterday.plus({ days: 365 }).toJSDate(),
  });
  // A paid Stripe invoice, as its webhook delivers it: a top-up with a receipt link.
  await applyStripeEvent(past, {
    id: 'evt_demo_top_up',
    type: 'invoice.paid',
    data: {
      object: {
        id: 'in_demo_top_up',
        number: 'DEMO-0001',
        amount_paid: 5_000,
        currency: 'usd',
        hosted_invoice_url: 'https://invoice.stripe.com/i/demo_top_up',
        metadata: { user_id: DEMO_USER_ID },
      },
    },
  });

  const template = (await listTemplates(ctx)).find((t) => t.templateKey === 'appointment_setter');
  if (!template) throw new Error('The seeded template appointment_setter is missing or inactive.');
  const agent = await createAgent(ctx, {
    template_id: template.id,
    name: 'Demo appointment setter',
    phone_number: '+14155550100',
    phone_number_label: 'Main line',
    variables: { agent_name: 'Sam', company_name: 'Acme Dental', meeting_type: 'check-up' },
  });
  // The demo calls through the simulator, so its agent is the simulator's, provisioned before its
  // campaign of yesterday is dispatched (at a real provider, the drift sweep would make it there).
  await provisionAgent(env, new SimulatedVoiceProvider(), agent.id, true);
  const { groupId } = await importContacts(ctx, {
    group_name: 'Demo leads',
    description: 'A few sample contacts',
    csv_data: DEMO_CONTACTS.map((row) => ({ ...row })),
  });

  const called = await createCampaign(ctx, {
    agent_id: agent.id,
    contact_group_id: groupId,
    name: 'Demo check-up calls (yesterday)',
    description: 'Called yesterday: see its report, call history and the appointment it booked',
    timezone: ZONE,
    concurrent_calls: 2,
    schedule_config: { max_attempts: 1 },
    ...ANY_TIME,
  });
  await dispatchCampaign(ctx, called.id, { triggeredBy: 'demo' });
  await callThrough(past, called.id, yesterdaysCalls(yesterday), 4 * 60_000);

  await createCampaign(serviceContext(env, { id: DEMO_USER_ID, isAdmin: false }), {
    agent_id: agent.id,
    contact_group_id: groupId,
    name: 'Demo check-up campaign',
    description: 'Dispatch it to watch simulated calls arrive (no real calls are placed)',
    timezone: ZONE,
    concurrent_calls: 2,
    max_retry_days: 2,
    schedule_config: {
      max_attempts: 3,
      max_attempts_per_day: 2,
      retry_interval_minutes: 60,
      retry_on: ['no_answer', 'busy', 'failed', 'voicemail'],
    },
    ...ANY_TIME,
  });
  return true;
}
