import { type Server } from './support.js';

// The load benchmark's data: customers some months in, created the way a client creates them (through
// the public API), so that the rows look like production's: a handful of agents, a few imported lists,
// campaigns accumulating.

export const AGENTS = Number(process.env.BENCH_LOAD_AGENTS ?? 10);
export const GROUPS = 10;
export const CONTACTS = 200;
// Enough for the largest nested page (50 campaigns). The v1 lists are unpaginated, so their cost grows with
// the account: BENCH_LOAD_CAMPAIGNS shows another size.
export const CAMPAIGNS = Number(process.env.BENCH_LOAD_CAMPAIGNS ?? 50);

export async function call(server: Server, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (res.status >= 300 || json?.errors) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json).slice(0, 500)}`);
  return json;
}

let phoneSeq = 0;
const phone = () => `+1415${String(2_000_000 + (phoneSeq += 1)).padStart(7, '0')}`;

/** One customer's agents, groups and campaigns. */
export async function seedCustomer(server: Server, token: string) {
  const { data } = await call(server, token, 'POST', '/graphql', { query: '{ agentTemplates { id templateKey } }' });
  const template =
    data.agentTemplates.find((t: { templateKey: string }) => t.templateKey === 'appointment_setter') ?? data.agentTemplates[0];
  const agents: string[] = [];
  for (let i = 0; i < AGENTS; i += 1) {
    const created = await call(server, token, 'POST', '/graphql', {
      query: 'mutation($input: CreateAgentInput!) { createAgent(input: $input) { id } }',
      variables: {
        input: {
          templateId: template.id,
          name: `Agent ${i}`,
          phoneNumber: phone(),
          variables: { agent_name: 'Sam', company_name: 'Acme Dental' },
        },
      },
    });
    agents.push(created.data.createAgent.id);
  }
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g += 1) {
    const csvData = Array.from({ length: CONTACTS }, (_, i) => ({
      'First Name': `Person ${i}`,
      'Last Name': `Group ${g}`,
      Phone: phone(),
      Company: `Company ${i % 17}`,
    }));
    const imported = await call(server, token, 'POST', '/api/v1/contacts/import/', { groupName: `Group ${g}`, csvData });
    groups.push(imported.groupId);
  }
  for (let c = 0; c < CAMPAIGNS; c += 1) {
    await call(server, token, 'POST', '/api/v1/contacts/contacts/', {
      name: `Campaign ${c}`,
      agent_id: agents[c % AGENTS],
      contact_group_id: groups[c % GROUPS],
      concurrent_calls: 5,
    });
  }
}
