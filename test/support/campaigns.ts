import { randomUUID } from 'node:crypto';
import type { CampaignStatus } from '../../src/generated/prisma/enums.js';
import type { TestApp } from './app.js';
import { createAgent } from './fixtures.js';

// Campaign fixtures, built through the public APIs as a client would; only states that the dialer
// reaches (completed, a scheduled start that came due) are set directly in the database.

let numberSeq = 0;

/** Rows of `count` callable contacts with numbers no other fixture uses. */
export function contactRows(count: number): Record<string, string>[] {
  return Array.from({ length: count }, () => {
    numberSeq += 1;
    return { Name: `Callee ${numberSeq}`, Phone: `+1415777${String(numberSeq).padStart(4, '0')}` };
  });
}

/** Imports a contact group over v1 and returns its id. */
export async function importGroup(app: TestApp, token: string, rows: Record<string, string>[], groupName = 'Leads'): Promise<string> {
  const res = await app.request('POST', '/api/v1/contacts/import/', { token, body: { groupName, csvData: rows } });
  if (res.status !== 201) throw new Error(`import failed: ${res.status} ${res.text}`);
  return res.json.groupId as string;
}

/** Credits the user through the admin mutation. */
export async function grant(app: TestApp, userId: string, amountCents: number): Promise<void> {
  const result = await app.gql(
    'mutation($input: GrantCreditsInput!) { grantCredits(input: $input) { id } }',
    { input: { userId, kind: 'top_up', amountCents } },
    await app.token(randomUUID(), 'admin'),
  );
  if (result.errors) throw new Error(JSON.stringify(result.errors));
}

/** Lets the user's campaigns turn the regional rules off for 300 days (of any test's clock), through the admin mutation. */
export async function exemptFromRegionalRules(app: TestApp, userId: string): Promise<string> {
  const result = await app.gql(
    'mutation($input: GrantRegionalRuleExemptionInput!) { grantRegionalRuleExemption(input: $input) { id } }',
    {
      input: {
        userId,
        reason: 'Tests: calls at any hour go to the simulator.',
        expiresAt: new Date(Date.now() + 300 * 86_400_000).toISOString(),
      },
    },
    await app.token(randomUUID(), 'admin'),
  );
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return (result.data as { grantRegionalRuleExemption: { id: string } }).grantRegionalRuleExemption.id;
}

export interface Customer {
  id: string;
  token: string;
  agent: Awaited<ReturnType<typeof createAgent>>;
  groupId: string;
}

/** A user with an agent, a group of `contacts` callable contacts and, unless 0, credits. */
export async function customer(app: TestApp, { contacts = 2, credits = 1_000 } = {}): Promise<Customer> {
  const id = randomUUID();
  const token = await app.token(id);
  const agent = await createAgent(app, token);
  const groupId = await importGroup(app, token, contactRows(contacts));
  if (credits > 0) await grant(app, id, credits);
  return { id, token, agent, groupId };
}

/** Creates a campaign over v1 (POST /contacts/contacts/) and returns the v1 body. */
export async function createCampaign(app: TestApp, who: Customer, body: Record<string, unknown> = {}) {
  // Regional rules off need an admin's exemption: the fixture asks for one, as the customer would.
  if (body.regional_rules === false) await exemptFromRegionalRules(app, who.id);
  const res = await app.request('POST', '/api/v1/contacts/contacts/', {
    token: who.token,
    body: { name: 'Spring recall', agent_id: who.agent.id, contact_group_id: who.groupId, ...body },
  });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.json;
}

/** Puts a campaign in a state only the dialer (or time) reaches. */
export async function forceStatus(
  app: TestApp,
  id: string,
  status: CampaignStatus,
  extra: { startedAt?: Date; pausedReason?: string } = {},
) {
  await app.prisma.campaign.update({ where: { id }, data: { status, ...extra } });
}

export const dispatch = (
  app: TestApp,
  token: string,
  id: string,
  body: Record<string, unknown> = { triggered_by: 'tests' },
  headers: Record<string, string> = {},
) => app.request('POST', `/api/v1/campaigns/${id}/dispatch/`, { token, body, headers });
