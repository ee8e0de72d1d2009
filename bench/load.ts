import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { cpuMsOf, memoryOf, round, startServer, tokenFor, withDatabase, type Server } from './support.js';

// Issue 8: the read endpoints under load, on PostgreSQL, against the server started as production starts
// it. A customer with AGENTS agents, GROUPS groups of CONTACTS contacts and CAMPAIGNS campaigns (and
// NEIGHBOURS other customers of the same size, so that every query has to pick one user's rows), seeded
// through the public API. Each scenario: CONNECTIONS connections for SECONDS seconds after a warm-up.
// Targets: REST list endpoints p99 under 50 ms at 20 connections; the nested GraphQL query one or two
// SQL statements whatever the page size.

const CONNECTIONS = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 20);
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 10);
// A customer some months in: a handful of agents, a few lists, campaigns accumulating (the v1 lists are
// unpaginated, so their cost grows with the account: BENCH_LOAD_CAMPAIGNS=50 shows a larger one).
const AGENTS = Number(process.env.BENCH_LOAD_AGENTS ?? 10);
const GROUPS = 10;
const CONTACTS = 200;
const CAMPAIGNS = Number(process.env.BENCH_LOAD_CAMPAIGNS ?? 25);
const NEIGHBOURS = 5;

const NESTED = /* GraphQL */ `
  query Nested($first: Int!) {
    campaigns(first: $first) {
      edges {
        node {
          id
          name
          status
          concurrentCalls
          startedAt
          agent {
            id
            name
            isActive
          }
          contactGroup {
            id
            name
            total
            contacts(first: 20) {
              edges {
                node {
                  id
                  name
                  phoneNumber
                  status
                }
              }
            }
          }
        }
      }
    }
  }
`;

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

const scenarios = (pageSize: number): Scenario[] => [
  { name: 'REST GET /api/v1/campaigns/', method: 'GET', path: '/api/v1/campaigns/' },
  { name: 'REST GET /api/v1/agents/active/', method: 'GET', path: '/api/v1/agents/active/' },
  {
    name: `GraphQL campaigns(first: ${pageSize}) + agent + group + 20 contacts`,
    method: 'POST',
    path: '/graphql',
    body: JSON.stringify({ query: NESTED, variables: { first: pageSize }, operationName: 'Nested' }),
  },
];

async function call(server: Server, token: string, method: string, path: string, body?: unknown) {
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

/** One customer's agents, groups and campaigns, created the way a client creates them. */
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

async function statementsTotal(server: Server): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(text.match(/^db_statements_total (\d+)/m)?.[1] ?? Number.NaN);
}

/** SQL statements per request, from the server's own counter over a few requests sent one at a time. */
async function statementsPerRequest(server: Server, token: string, scenario: Scenario): Promise<number> {
  const requests = 10;
  const before = await statementsTotal(server);
  for (let i = 0; i < requests; i += 1) {
    await call(server, token, scenario.method, scenario.path, scenario.body === undefined ? undefined : JSON.parse(scenario.body));
  }
  // Less the one statement the second scrape reads the dialer gauges with.
  return round(((await statementsTotal(server)) - before - 1) / requests, 2);
}

async function load(server: Server, token: string, scenario: Scenario, seconds: number) {
  const result = await autocannon({
    url: `${server.url}${scenario.path}`,
    method: scenario.method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: scenario.body,
    connections: CONNECTIONS,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${scenario.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

export async function benchLoad() {
  return withDatabase(async (url) => {
    // Off: the dialer's sweep would add statements of its own; the limit: one user sends all the load.
    const server = await startServer(url, { DIALER: 'off', RATE_LIMIT: '9999999/1' });
    try {
      const token = await tokenFor(randomUUID());
      for (let n = 0; n < NEIGHBOURS; n += 1) await seedCustomer(server, await tokenFor(randomUUID()));
      await seedCustomer(server, token);
      const idle = await memoryOf(server.pid);

      // The nested query's statement count at two page sizes: the same count means no N+1.
      const small = scenarios(5)[2]!;
      const nestedStatements = {
        5: await statementsPerRequest(server, token, small),
        [CAMPAIGNS]: await statementsPerRequest(server, token, scenarios(CAMPAIGNS)[2]!),
      };

      const rows = [];
      for (const scenario of scenarios(CAMPAIGNS)) {
        const statements = await statementsPerRequest(server, token, scenario);
        await load(server, token, scenario, 2);
        const cpuBefore = await cpuMsOf(server.pid);
        const result = await load(server, token, scenario, SECONDS);
        const cpuMs = (await cpuMsOf(server.pid)) - cpuBefore;
        const memory = await memoryOf(server.pid);
        rows.push({
          scenario: scenario.name,
          requestsPerSecond: round(result.requests.average, 0),
          p50Ms: result.latency.p50,
          p99Ms: result.latency.p99,
          maxMs: result.latency.max,
          requests: result.requests.total,
          sqlStatementsPerRequest: statements,
          // Less noisy than latency on a shared machine: what one request costs the server.
          serverCpuMsPerRequest: round(cpuMs / result.requests.total, 2),
          rssMb: round(memory.rssMb),
        });
      }
      const memory = await memoryOf(server.pid);
      return {
        name: `read endpoints under load (${CONNECTIONS} connections, ${SECONDS} s each, PostgreSQL)`,
        dataset: `${NEIGHBOURS + 1} customers x (${AGENTS} agents, ${GROUPS} groups x ${CONTACTS} contacts, ${CAMPAIGNS} campaigns)`,
        scenarios: rows,
        nestedStatementsByPageSize: nestedStatements,
        idleRssMb: round(idle.rssMb),
        peakRssMb: round(memory.peakMb),
        targets: { restP99Ms: 50, nestedStatements: '1 or 2, the same for every page size' },
      };
    } finally {
      await server.stop();
    }
  });
}
