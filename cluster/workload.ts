import { randomUUID } from 'node:crypto';
import { signToken } from '../src/services/auth.js';
import { JWT_SECRET } from './services.js';

// What the customers do to the cluster, all through its public surfaces: each customer gets an agent,
// contact lists imported over v1, credits from an administrator, and campaigns of simulated calls that it
// dispatches; then v1 and GraphQL reads and small imports go on while the calls run. Every answer is
// recorded with the instance that gave it (HAProxy's X-Served-By), for the checker.

export interface WorkloadShape {
  customers: number;
  /** Contacts in each of a customer's two lists. */
  contacts: number;
  /** Per campaign; a customer runs three (two on its first list, so their contacts overlap). */
  concurrentCalls: number;
  maxAttempts: number;
}

export interface Customer {
  userId: string;
  token: string;
  campaignIds: string[];
}

export interface Answer {
  at: number;
  ms: number;
  /** 0: no answer (connection refused or cut, or no answer within the timeout). */
  status: number;
  /** The API instance that answered, as HAProxy names it; null for HAProxy's own answers and no answer. */
  server: string | null;
  what: string;
}

export class Recorder {
  readonly answers: Answer[] = [];

  async request(base: string, what: string, token: string, method: string, path: string, body?: unknown, timeoutMs = 15_000) {
    const at = Date.now();
    try {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      this.answers.push({ at, ms: Date.now() - at, status: res.status, server: res.headers.get('x-served-by'), what });
      return { status: res.status, text };
    } catch {
      this.answers.push({ at, ms: Date.now() - at, status: 0, server: null, what });
      return { status: 0, text: '' };
    }
  }
}

let phoneSeq = 0;
const phone = () => `+1415${String(2_000_000 + (phoneSeq += 1)).padStart(7, '0')}`;

const ALL_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** Sends a setup request until it is answered 2xx (the cluster may be starting); returns its JSON. */
async function setup(recorder: Recorder, base: string, token: string, method: string, path: string, body?: unknown): Promise<any> {
  for (let attempt = 1; ; attempt += 1) {
    const { status, text } = await recorder.request(base, 'setup', token, method, path, body, 60_000);
    const json = status ? JSON.parse(text) : undefined;
    if (status >= 200 && status < 300 && !json?.errors) return json;
    if (attempt >= 5 || (status >= 400 && status < 500)) throw new Error(`${method} ${path}: ${status} ${text.slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
  }
}

const graphql = (query: string, variables: Record<string, unknown> = {}) => ({ query, variables });

export const tokenOf = (sub: string, role?: 'admin') => signToken(JWT_SECRET, { sub, ttlSeconds: 24 * 3600, role });

/** A customer's account as the workload made it: its token and its agent. */
export interface Account {
  userId: string;
  token: string;
  agentId: string;
}

/** A new customer with an agent and `credits` cents granted by an administrator. */
export async function createAccount(recorder: Recorder, base: string, admin: string, credits = 10_000_000): Promise<Account> {
  const userId = randomUUID();
  const token = await tokenOf(userId);
  const templates = await setup(recorder, base, token, 'POST', '/graphql', graphql('{ agentTemplates { id templateKey } }'));
  const template =
    templates.data.agentTemplates.find((t: { templateKey: string }) => t.templateKey === 'appointment_setter') ??
    templates.data.agentTemplates[0];
  const agent = await setup(
    recorder,
    base,
    token,
    'POST',
    '/graphql',
    graphql('mutation($input: CreateAgentInput!) { createAgent(input: $input) { id } }', {
      input: {
        templateId: template.id,
        name: 'Caller',
        phoneNumber: phone(),
        variables: { agent_name: 'Sam', company_name: 'Acme Dental' },
      },
    }),
  );
  await setup(
    recorder,
    base,
    admin,
    'POST',
    '/graphql',
    graphql('mutation($input: GrantCreditsInput!) { grantCredits(input: $input) { id } }', {
      input: { userId, kind: 'top_up', amountCents: String(credits) },
    }),
  );
  // Its campaigns call at any hour, with the regional rules off: that needs an administrator's exemption.
  await setup(
    recorder,
    base,
    admin,
    'POST',
    '/graphql',
    graphql('mutation($input: GrantRegionalRuleExemptionInput!) { grantRegionalRuleExemption(input: $input) { id } }', {
      input: {
        userId,
        reason: 'Cluster test: simulated calls at any hour',
        expiresAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      },
    }),
  );
  const agentId: string = agent.data.createAgent.id;
  await provisioned(recorder, base, token, agentId);
  return { userId, token, agentId };
}

/** Waits, as a client would, until the agent is provisioned at the voice provider: dispatch refuses it before. */
async function provisioned(recorder: Recorder, base: string, token: string, agentId: string): Promise<void> {
  const query = graphql('query($id: UUID!) { agent(id: $id) { provisioning { state error } } }', { id: agentId });
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { provisioning } = (await setup(recorder, base, token, 'POST', '/graphql', query)).data.agent;
    if (provisioning.state === 'ready') return;
    if (provisioning.state === 'failed') throw new Error(`agent ${agentId} failed to provision: ${provisioning.error}`);
    if (Date.now() > deadline) throw new Error(`agent ${agentId} still ${provisioning.state} after 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Imports a list of `contacts` new numbers over v1; returns its group's id. */
export async function importList(recorder: Recorder, base: string, account: Account, name: string, contacts: number): Promise<string> {
  const csvData = Array.from({ length: contacts }, (_, i) => ({ 'First Name': `Person ${i}`, 'Last Name': name, Phone: phone() }));
  return (await setup(recorder, base, account.token, 'POST', '/api/v1/contacts/import/', { groupName: `List ${name}`, csvData })).groupId;
}

/** A campaign on the list that calls at any hour, `maxAttempts` per contact a minute apart (not yet dispatched). */
export async function createCampaign(
  recorder: Recorder,
  base: string,
  account: Account,
  group: string,
  name: string,
  concurrentCalls: number,
  maxAttempts: number,
): Promise<string> {
  const created = await setup(recorder, base, account.token, 'POST', '/api/v1/contacts/contacts/', {
    name,
    agent_id: account.agentId,
    contact_group_id: group,
    concurrent_calls: concurrentCalls,
    calling_hours: { start: '00:00', end: '24:00' },
    active_days: ALL_DAYS,
    regional_rules: false,
    schedule_config: { max_attempts: maxAttempts, max_attempts_per_day: maxAttempts, retry_interval_minutes: 1 },
  });
  return created.id;
}

export async function dispatch(recorder: Recorder, base: string, account: { token: string }, campaignId: string): Promise<void> {
  await setup(recorder, base, account.token, 'POST', `/api/v1/campaigns/${campaignId}/dispatch/`, {});
}

/** One customer: an agent, two lists, credits for every call, three campaigns (not yet dispatched). */
export async function createCustomer(recorder: Recorder, base: string, admin: string, shape: WorkloadShape): Promise<Customer> {
  // Enough for every call at its longest, so that no campaign pauses for credits.
  const account = await createAccount(recorder, base, admin);
  const groups: string[] = [];
  for (const list of ['A', 'B']) groups.push(await importList(recorder, base, account, list, shape.contacts));
  const campaignIds: string[] = [];
  for (const [n, group] of [groups[0]!, groups[0]!, groups[1]!].entries())
    campaignIds.push(await createCampaign(recorder, base, account, group, `Campaign ${n + 1}`, shape.concurrentCalls, shape.maxAttempts));
  return { userId: account.userId, token: account.token, campaignIds };
}

export async function dispatchAll(recorder: Recorder, base: string, customers: Customer[]): Promise<void> {
  await Promise.all(
    customers.map(async (customer) => {
      for (const id of customer.campaignIds) await dispatch(recorder, base, customer, id);
    }),
  );
}

const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)]!;

const NESTED = `query($first: Int!) { campaigns(first: $first) { edges { node { id name status progress { total done dialing }
  agent { id name } contactGroup { id name } } } } }`;

/**
 * Readers and importers through the load balancer until `stop` is set: `readers` loops of v1 lists,
 * GraphQL reads and reports, and one loop importing a small list now and then.
 */
export async function runTraffic(recorder: Recorder, base: string, customers: Customer[], readers: number, stop: { now: boolean }) {
  const reader = async () => {
    while (!stop.now) {
      const customer = pick(customers);
      const roll = Math.random();
      if (roll < 0.3) await recorder.request(base, 'v1 campaigns', customer.token, 'GET', '/api/v1/campaigns/');
      else if (roll < 0.5) await recorder.request(base, 'v1 agents', customer.token, 'GET', '/api/v1/agents/active/');
      else if (roll < 0.7)
        await recorder.request(base, 'v1 report', customer.token, 'GET', `/api/v1/campaigns/${pick(customer.campaignIds)}/report/`);
      else await recorder.request(base, 'graphql campaigns', customer.token, 'POST', '/graphql', graphql(NESTED, { first: 10 }));
    }
  };
  const importer = async () => {
    for (let n = 0; !stop.now; n += 1) {
      const customer = pick(customers);
      const csvData = Array.from({ length: 50 }, (_, i) => ({ 'First Name': `Late ${i}`, Phone: phone() }));
      await recorder.request(base, 'v1 import', customer.token, 'POST', '/api/v1/contacts/import/', { groupName: `Late ${n}`, csvData });
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };
  await Promise.all([...Array.from({ length: readers }, reader), importer()]);
}
