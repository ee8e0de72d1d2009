import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { grant } from './support/campaigns.js';
import { createAgent } from './support/fixtures.js';
import { openApiChecker, type OpenApiChecker } from './support/openapi.js';

// The v1 OpenAPI document as a typed client meets it: types generated from the document the app serves
// (openapi-typescript, default options), a first use of the API written against them with openapi-fetch
// and compiled strictly, lines that must not compile, and then that same first use run against the app.

/** A customer's first use of v1, as its own module beside the generated `api.ts`. */
const FIRST_USE = `
import type { Client } from 'openapi-fetch';
import type { components, paths } from './api.js';

// The client reads JSON: the lists that also download as CSV (?format=csv) answer text/csv too.
type V1 = Client<paths, 'application/json'>;
type Campaign = components['schemas']['Campaign'];
type DispatchRefused = paths['/api/v1/campaigns/{id}/dispatch/']['post']['responses'][409]['content']['application/json'];

/** What the customer does outside v1, which has no endpoint for it. */
export interface Outside {
  createAgent(templateId: string): Promise<string>;
  topUp(): Promise<void>;
}

export async function firstUse(client: V1, outside: Outside) {
  const templates = await client.GET('/api/v1/agents/templates/');
  const template = templates.data?.find((t) => t.template_key === 'appointment_setter');
  if (!template?.is_active) throw new Error('no appointment setter template');
  const agentId = await outside.createAgent(template.id);
  const active = await client.GET('/api/v1/agents/active/');
  const agent = active.data?.find((a) => a.id === agentId);
  if (!agent) throw new Error('the new agent is not active');

  const rows = [{ Name: 'Ada Lovelace', Phone: '+14155550101' }, { Name: 'Alan Turing', Phone: '+14155550102' }];
  const imported = await client.POST('/api/v1/contacts/import/', { body: { groupName: 'Spring leads', csvData: rows } });
  if (!imported.data) throw new Error('import: ' + imported.response.status);
  const groupId = imported.data.groupId;
  const added = await client.PATCH('/api/v1/contacts/groups/{id}/', {
    params: { path: { id: groupId } },
    body: { phone_number: '+14155550103', data: { Name: 'Grace Hopper' } },
  });
  if (!added.data) throw new Error('add contact: ' + added.response.status);

  // Only what has no default: the rest is the server's.
  const created = await client.POST('/api/v1/contacts/contacts/', { body: { name: 'Spring recall', agent_id: agent.id, contact_group_id: groupId } });
  if (!created.data) throw new Error('create campaign: ' + created.response.status);
  const campaign: Campaign = created.data;

  // Without credits the dispatch is refused, and says why; topped up, it starts.
  const refused = await dispatch(client, campaign.id);
  await outside.topUp();
  const started = await dispatch(client, campaign.id);

  const calls = await client.GET('/api/v1/campaigns/recordings/', { params: { query: { limit: 10, offset: 0 } } });
  const report = await client.GET('/api/v1/campaigns/{id}/report/', { params: { path: { id: campaign.id }, query: { limit: 10, offset: 0 } } });
  const widest = await client.GET('/api/v1/campaigns/{id}/report/', { params: { path: { id: campaign.id }, query: { limit: 1000 } } });
  if (!calls.data || !report.data || !widest.data) throw new Error('reading results failed');

  return {
        agentName: agent.name,
    imported: imported.data.totalImported,
    added: added.data.phone_number,
    campaign: { status: campaign.status, timezone: campaign.timezone, concurrentCalls: campaign.concurrent_calls, callingHours: campaign.calling_hours },
    refused,
    started,
    calls: calls.data.length,
    report: { status: report.data.campaign.status, outcomes: report.data.totalContactOutcomes, limit: report.data.limit, offset: report.data.offset },
    widestLimit: widest.data.limit,
  };
}

async function dispatch(client: V1, id: string) {
  const { data, error, response } = await client.POST('/api/v1/campaigns/{id}/dispatch/', { params: { path: { id } } });
  if (data) return { status: data.status, scheduled: data.scheduled, triggeredBy: data.triggered_by };
  if (response.status === 409) {
    const refusal = error as DispatchRefused;
    if ('success' in refusal) {
      const success: false = refusal.success;
      return { success, campaignId: refusal.campaign_id, triggeredBy: refusal.triggered_by, reason: refusal.reason };
    }
  }
  throw new Error('dispatch: ' + response.status + ' ' + JSON.stringify(error));
}

/** Never called: each marked line must fail to compile, or the types have become too loose. */
export async function mustNotCompile(client: V1, id: string, groupId: string) {
  // @ts-expect-error limit is a number, not its text
  await client.GET('/api/v1/campaigns/recordings/', { params: { query: { limit: '10' } } });
  // @ts-expect-error offset is a number too
  await client.GET('/api/v1/campaigns/{id}/report/', { params: { path: { id }, query: { offset: '0' } } });
  // @ts-expect-error agent_id, not agentId
  await client.POST('/api/v1/contacts/contacts/', { body: { name: 'Spring recall', agentId: id, contact_group_id: groupId } });
  // @ts-expect-error contact_group_id has no default
  await client.POST('/api/v1/contacts/contacts/', { body: { name: 'Spring recall', agent_id: id } });
  // @ts-expect-error triggered_by is text
  await client.POST('/api/v1/campaigns/{id}/dispatch/', { params: { path: { id } }, body: { triggered_by: 1 } });
  // @ts-expect-error the path needs its id
  await client.POST('/api/v1/campaigns/{id}/dispatch/', {});
  const { data } = await client.GET('/api/v1/campaigns/{id}/', { params: { path: { id } } });
  // @ts-expect-error the v1 field is contact_group_id
  return data?.contactGroupId;
}
`;

/** As strict as a careful client project compiles. */
const STRICT: ts.CompilerOptions = {
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  noImplicitOverride: true,
  noUnusedLocals: true,
  noUnusedParameters: true,
  noFallthroughCasesInSwitch: true,
  target: ts.ScriptTarget.ES2023,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  types: [],
  skipLibCheck: true,
  noEmit: true,
};

let app: TestApp;
let checker: OpenApiChecker;
let dir: string;

beforeAll(async () => {
  app = await startTestApp();
  checker = await openApiChecker(app);
  dir = await mkdtemp(join(tmpdir(), 'v1-client-'));
  // The client's own project: its generated types, its code, and the packages it installed.
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(join(dir, 'api.ts'), astToString(await openapiTS(checker.document)));
  await writeFile(join(dir, 'first-use.ts'), FIRST_USE);
  await symlink(fileURLToPath(new URL('../node_modules', import.meta.url)), join(dir, 'node_modules'), 'dir');
});
afterAll(async () => {
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a typed client of v1', () => {
  it('is promised integers for paging, an optional dispatch body and request schemas in place', () => {
    const operations = Object.values(checker.document.paths).flatMap((methods: any) => Object.values(methods)) as any[];
    const paging = operations.flatMap((o) => (o.parameters ?? []).filter((p: any) => p.name === 'limit' || p.name === 'offset'));
    expect(paging.length).toBeGreaterThanOrEqual(10);
    for (const parameter of paging) {
      expect(parameter.schema).toMatchObject({ type: 'integer', minimum: parameter.name === 'limit' ? 1 : 0 });
    }
    const transactions = checker.document.paths['/api/v1/billing/transactions/'].get.parameters;
    expect(transactions[0]).toMatchObject({
      name: 'limit',
      required: false,
      schema: { default: 50 },
      description: expect.stringContaining('500'),
    });
    expect(checker.document.paths['/api/v1/campaigns/{id}/dispatch/'].post.requestBody.required).toBe(false);
    for (const operation of operations.filter((o) => o.requestBody)) {
      expect(JSON.stringify(operation.requestBody)).not.toContain('$ref');
    }
  });

  it('compiles its first use strictly, and refuses what the API refuses', () => {
    const program = ts.createProgram([join(dir, 'api.ts'), join(dir, 'first-use.ts')], STRICT);
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.formatDiagnostic(d, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' }));
    expect(diagnostics).toEqual([]);
  }, 120_000);

  it('runs that first use against the app, every answer as the document declares it', async () => {
    const js = ts.transpileModule(FIRST_USE, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2023 } });
    await writeFile(join(dir, 'first-use.mjs'), js.outputText);
    const { firstUse } = await import(pathToFileURL(join(dir, 'first-use.mjs')).href);

    const userId = randomUUID();
    const token = await app.token(userId);
    const client = createClient({ baseUrl: app.url, headers: { authorization: `Bearer ${token}` } });
    const answers: { method: string; path: string; status: number; body: unknown }[] = [];
    client.use({
      async onResponse({ request, response, schemaPath }) {
        const body = response.headers.get('content-type')?.startsWith('application/json') ? await response.clone().json() : undefined;
        answers.push({ method: request.method.toLowerCase(), path: schemaPath, status: response.status, body });
      },
    });

    const result = await firstUse(client, {
      createAgent: async (templateId: string) => (await createAgent(app, token, { templateId })).id,
      topUp: () => grant(app, userId, 1_000),
    });

    expect(result).toEqual({
      agentName: 'Front desk',
      imported: 2,
      added: '+14155550103',
      campaign: { status: 'draft', timezone: 'UTC', concurrentCalls: 1, callingHours: { start: '09:00', end: '17:00' } },
      refused: { success: false, campaignId: expect.any(String), triggeredBy: 'api', reason: 'insufficient_credits' },
      started: { status: 'running', scheduled: false, triggeredBy: 'api' },
      calls: 0,
      report: { status: 'running', outcomes: 3, limit: 10, offset: 0 },
      widestLimit: 500,
    });
    expect(answers.map((a) => `${a.method} ${a.path} ${a.status}`)).toEqual([
      'get /api/v1/agents/templates/ 200',
      'get /api/v1/agents/active/ 200',
      'post /api/v1/contacts/import/ 201',
      'patch /api/v1/contacts/groups/{id}/ 200',
      'post /api/v1/contacts/contacts/ 201',
      'post /api/v1/campaigns/{id}/dispatch/ 409',
      'post /api/v1/campaigns/{id}/dispatch/ 202',
      'get /api/v1/campaigns/recordings/ 200',
      'get /api/v1/campaigns/{id}/report/ 200',
      'get /api/v1/campaigns/{id}/report/ 200',
    ]);
    for (const answer of answers) checker.expectMatches(answer.path, answer.method, answer.status, answer.body);
  });
});
