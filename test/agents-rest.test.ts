import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createAgent, insertCampaign } from './support/fixtures.js';
import { openApiChecker, type OpenApiChecker } from './support/openapi.js';

// The four v1 agent endpoints, field by field against interface-v1.md (2.4, 2.5) and against the
// OpenAPI document the server publishes.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

const TEMPLATE_FIELDS = [
  'id',
  'name',
  'description',
  'template_key',
  'system_prompt_template',
  'placeholder_schema',
  'agent_profile_defaults',
  'llm_runtime_defaults',
  'response_engine_type',
  'is_active',
  'created_at',
  'updated_at',
];
const AGENT_FIELDS = [
  'id',
  'user_id',
  'template_id',
  'name',
  'created_at',
  'updated_at',
  'agent_templates',
  'phone_numbers',
  'campaigns',
  'status',
  'is_active',
  'phone_number_id',
  'response_engine_type',
  'llm_websocket_url',
  'agent_config',
  'agent_profile',
  'agent_variables',
  'llm_runtime_overrides',
];

function expectTemplateShape(t: any) {
  expect(Object.keys(t).sort()).toEqual([...TEMPLATE_FIELDS].sort());
  expect(t.id).toMatch(UUID);
  for (const key of ['name', 'description', 'template_key', 'system_prompt_template', 'response_engine_type']) {
    expect(typeof t[key]).toBe('string');
  }
  expect(typeof t.is_active).toBe('boolean');
  expect(t.created_at).toMatch(ISO);
  expect(t.updated_at).toMatch(ISO);
  expect(t.placeholder_schema).toMatchObject({ type: 'object' });
}

let app: TestApp;
let openapi: any;
let checker: OpenApiChecker;

beforeAll(async () => {
  app = await startTestApp();
  checker = await openApiChecker(app);
  openapi = checker.document;
});
afterAll(() => app.close());

const expectMatchesOpenApi = (path: string, method: string, status: number, body: unknown) =>
  checker.expectMatches(path, method, status, body);

describe('GET /api/v1/agents/templates/', () => {
  it('lists the seeded templates in the 2.5 shape', async () => {
    const token = await app.token();
    const res = await app.request('GET', '/api/v1/agents/templates/', { token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.json.map((t: any) => t.template_key).sort()).toEqual([
      'appointment_reminder',
      'appointment_setter',
      'customer_survey',
      'lead_qualifier',
      'payment_reminder',
    ]);
    res.json.forEach(expectTemplateShape);
    expectMatchesOpenApi('/api/v1/agents/templates/', 'get', 200, res.json);
  });

  it('hides inactive templates from customers', async () => {
    await app.prisma.agentTemplate.update({ where: { templateKey: 'payment_reminder' }, data: { isActive: false } });
    try {
      const res = await app.request('GET', '/api/v1/agents/templates/', { token: await app.token() });
      expect(res.json.map((t: any) => t.template_key)).not.toContain('payment_reminder');
    } finally {
      await app.prisma.agentTemplate.update({ where: { templateKey: 'payment_reminder' }, data: { isActive: true } });
    }
  });
});

describe('GET /api/v1/agents/templates/{id}/', () => {
  it('returns one template in the 2.5 shape', async () => {
    const template = await app.prisma.agentTemplate.findUniqueOrThrow({ where: { templateKey: 'lead_qualifier' } });
    const res = await app.request('GET', `/api/v1/agents/templates/${template.id}/`, { token: await app.token() });
    expect(res.status).toBe(200);
    expectTemplateShape(res.json);
    expect(res.json).toMatchObject({ id: template.id, template_key: 'lead_qualifier', name: 'Lead Qualifier' });
    expectMatchesOpenApi('/api/v1/agents/templates/{id}/', 'get', 200, res.json);
  });

  it('is 404 for an unknown id and for a malformed one', async () => {
    const token = await app.token();
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await app.request('GET', `/api/v1/agents/templates/${id}/`, { token });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: 'Not found.' });
    }
  });
});

describe('GET /api/v1/agents/active/', () => {
  it('returns only the caller’s active agents, in the 2.4 shape with nested template, numbers and campaigns', async () => {
    const owner = randomUUID();
    const token = await app.token(owner);
    const agent = await createAgent(app, token, { name: 'Reception' });
    const archived = await createAgent(app, token, { name: 'Old one' });
    await app.request('DELETE', `/api/v1/agents/${archived.id}/`, { token });
    await insertCampaign(app, owner, agent.id, 'Spring recall');
    await createAgent(app, await app.token(), { name: 'Someone else’s' });

    const res = await app.request('GET', '/api/v1/agents/active/', { token });
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(1);
    const [item] = res.json;
    expect(Object.keys(item).sort()).toEqual([...AGENT_FIELDS].sort());
    expect(item).toMatchObject({
      id: agent.id,
      user_id: owner,
      name: 'Reception',
      status: 'active',
      is_active: true,
      phone_number_id: agent.phoneNumbers[0]!.id,
      response_engine_type: 'retell-llm',
      llm_websocket_url: null,
      agent_variables: { agent_name: 'Sam', company_name: 'Acme Dental', meeting_type: 'consultation' },
      campaigns: [{ name: 'Spring recall', status: 'draft' }],
      phone_numbers: [{ id: agent.phoneNumbers[0]!.id, number: agent.phoneNumbers[0]!.number, label: '', is_primary: true }],
    });
    expect(item.template_id).toBe(item.agent_templates.id);
    expectTemplateShape(item.agent_templates);
    expect(item.created_at).toMatch(ISO);
    expect(Object.keys(item.campaigns[0]).sort()).toEqual(['id', 'name', 'status']);
    expectMatchesOpenApi('/api/v1/agents/active/', 'get', 200, res.json);
  });
});

describe('DELETE /api/v1/agents/{id}/', () => {
  it('archives: 204 with no body, the agent leaves the active list, running campaigns pause', async () => {
    const owner = randomUUID();
    const token = await app.token(owner);
    const agent = await createAgent(app, token);
    const running = await insertCampaign(app, owner, agent.id, 'Live', 'running');
    const draft = await insertCampaign(app, owner, agent.id, 'Later', 'draft');

    const res = await app.request('DELETE', `/api/v1/agents/${agent.id}/`, { token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');

    const stored = await app.prisma.agent.findUniqueOrThrow({ where: { id: agent.id } });
    expect(stored).toMatchObject({ isActive: false, status: 'archived' });
    expect(await app.prisma.campaign.findUniqueOrThrow({ where: { id: running.id } })).toMatchObject({
      status: 'paused',
      pausedReason: 'agent_archived',
    });
    expect(await app.prisma.campaign.findUniqueOrThrow({ where: { id: draft.id } })).toMatchObject({ status: 'draft' });
    const active = await app.request('GET', '/api/v1/agents/active/', { token });
    expect(active.json).toEqual([]);

    const again = await app.request('DELETE', `/api/v1/agents/${agent.id}/`, { token });
    expect(again.status).toBe(204);
  });

  it('is 404 for another user’s agent and leaves it untouched', async () => {
    const agent = await createAgent(app, await app.token());
    const res = await app.request('DELETE', `/api/v1/agents/${agent.id}/`, { token: await app.token() });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ detail: 'Not found.' });
    expect(await app.prisma.agent.findUniqueOrThrow({ where: { id: agent.id } })).toMatchObject({ isActive: true });
  });

  it('answers 405 with Allow for a GET on the agent path', async () => {
    const res = await app.request('GET', `/api/v1/agents/${randomUUID()}/`, { token: await app.token() });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('DELETE');
    expect(res.json).toEqual({ detail: 'Method "GET" not allowed.' });
  });
});

describe('the OpenAPI document', () => {
  it('describes the four agent operations with bearer auth', async () => {
    expect(openapi.openapi).toBe('3.1.0');
    expect(openapi.info.version).toBe('1.0.0');
    expect(openapi.components.securitySchemes.bearerAuth).toEqual({
      type: 'http',
      scheme: 'bearer',
      description: expect.stringContaining('API key'),
    });
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/agents/templates/',
        '/api/v1/agents/templates/{id}/',
        '/api/v1/agents/active/',
        '/api/v1/agents/{id}/',
      ]),
    );
    expect(openapi.paths['/api/v1/agents/{id}/'].delete.responses['204']).toBeDefined();
    expect(openapi.components.schemas.Agent.required).toEqual(expect.arrayContaining(AGENT_FIELDS));
  });
});
