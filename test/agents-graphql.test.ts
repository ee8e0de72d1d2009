import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { CREATE_AGENT, createAgent, insertCampaign, nextPhoneNumber, templateId } from './support/fixtures.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

async function rowCounts() {
  const [agents, phoneNumbers] = await Promise.all([app.prisma.agent.count(), app.prisma.phoneNumber.count()]);
  return { agents, phoneNumbers };
}

describe('createAgent', () => {
  it('creates an agent from a template: variables validated, defaults filled, prompt rendered, number attached', async () => {
    const owner = randomUUID();
    const token = await app.token(owner);
    const result = await app.gql(
      `mutation($input: CreateAgentInput!) { createAgent(input: $input) {
          id name status isActive systemPrompt agentVariables responseEngineType
          template { templateKey } primaryPhoneNumber { number isPrimary } phoneNumbers { number label }
      } }`,
      {
        input: {
          templateId: await templateId(app),
          name: 'Reception',
          phoneNumber: '+1 (415) 555-0142',
          phoneNumberLabel: 'Main',
          variables: { agent_name: 'Riley', company_name: 'Bright Smiles', meeting_length_minutes: 45 },
        },
      },
      token,
    );
    expect(result.errors).toBeUndefined();
    const agent = result.data.createAgent;
    expect(agent).toMatchObject({
      name: 'Reception',
      status: 'active',
      isActive: true,
      responseEngineType: 'retell-llm',
      template: { templateKey: 'appointment_setter' },
      primaryPhoneNumber: { number: '+14155550142', isPrimary: true },
      phoneNumbers: [{ number: '+14155550142', label: 'Main' }],
      agentVariables: {
        agent_name: 'Riley',
        company_name: 'Bright Smiles',
        meeting_length_minutes: 45,
        meeting_type: 'consultation',
        booking_window_days: 14,
      },
    });
    expect(agent.systemPrompt).toContain('You are Riley, calling on behalf of Bright Smiles');
    expect(agent.systemPrompt).toContain('book a 45-minute consultation');
    expect(agent.systemPrompt).not.toContain('{{');
    const stored = await app.prisma.agent.findUniqueOrThrow({ where: { id: agent.id } });
    expect(stored.userId).toBe(owner);
  });

  const badInputs: [string, Record<string, unknown>, Record<string, string[]>][] = [
    ['an unknown template', { templateId: randomUUID() }, { templateId: ['No active agent template has this id.'] }],
    ['a name over 255 characters', { name: 'x'.repeat(256) }, { name: ['Ensure this field has no more than 255 characters.'] }],
    ['a blank name', { name: '   ' }, { name: ['This field may not be blank.'] }],
    ['a bad phone number', { phoneNumber: '+1 555' }, { phoneNumber: ['Enter a valid phone number, e.g. +14155552671.'] }],
    ['a missing required variable', { variables: { agent_name: 'Sam' } }, { 'variables.company_name': ['This field is required.'] }],
    [
      'a variable of the wrong type',
      { variables: { agent_name: 'Sam', company_name: 'Acme', meeting_length_minutes: 'long' } },
      { 'variables.meeting_length_minutes': ['Must be integer.'] },
    ],
    [
      'an unknown variable',
      { variables: { agent_name: 'Sam', company_name: 'Acme', favourite_colour: 'blue' } },
      { 'variables.favourite_colour': ['Unexpected field.'] },
    ],
    ['variables that are not an object', { variables: ['Sam'] }, { variables: ['Expected a dictionary of items but got type "list".'] }],
  ];

  for (const [label, overrides, fieldErrors] of badInputs) {
    it(`refuses ${label} with field errors and writes nothing`, async () => {
      const before = await rowCounts();
      const result = await app.gql(
        CREATE_AGENT,
        {
          input: {
            templateId: await templateId(app),
            name: 'Valid name',
            phoneNumber: nextPhoneNumber(),
            variables: { agent_name: 'Sam', company_name: 'Acme' },
            ...overrides,
          },
        },
        await app.token(),
      );
      expect(result.data).toBeNull();
      expect(result.errors).toHaveLength(1);
      expect(result.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT', fieldErrors });
      expect(await rowCounts()).toEqual(before);
    });
  }

  it('reports every bad field at once', async () => {
    const result = await app.gql(
      CREATE_AGENT,
      { input: { templateId: randomUUID(), name: 'ok', phoneNumber: 'nope', variables: {} } },
      await app.token(),
    );
    expect(Object.keys(result.errors![0]!.extensions!.fieldErrors).sort()).toEqual(['phoneNumber', 'templateId']);
  });

  it('refuses a number that already belongs to another active agent of the user', async () => {
    const token = await app.token();
    const first = await createAgent(app, token);
    const before = await rowCounts();
    const result = await app.gql(
      CREATE_AGENT,
      {
        input: {
          templateId: await templateId(app),
          name: 'Second',
          phoneNumber: first.phoneNumbers[0]!.number,
          variables: { agent_name: 'Sam', company_name: 'Acme' },
        },
      },
      token,
    );
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fieldErrors: { phoneNumber: [expect.any(String)] } });
    expect(await rowCounts()).toEqual(before);
  });

  it("takes over an archived agent's number, which the archived agent then no longer has as its primary", async () => {
    const token = await app.token();
    const first = await createAgent(app, token);
    await app.gql('mutation($id: UUID!) { archiveAgent(id: $id) { id } }', { id: first.id }, token);
    const second = await createAgent(app, token, { name: 'Second', phoneNumber: first.phoneNumbers[0]!.number });
    expect(second.phoneNumbers).toEqual([expect.objectContaining({ number: first.phoneNumbers[0]!.number, isPrimary: true })]);
    const archived = await app.gql(
      'query($id: UUID!) { agent(id: $id) { status primaryPhoneNumber { number } phoneNumbers { number } } }',
      { id: first.id },
      token,
    );
    expect(archived.data.agent).toEqual({ status: 'archived', primaryPhoneNumber: null, phoneNumbers: [] });
  });

  it('gives one of two agents created at once with the same number the number, and the other a field error', async () => {
    const token = await app.token();
    await createAgent(app, token);
    const before = await rowCounts();
    const phoneNumber = nextPhoneNumber();
    const input = { templateId: await templateId(app), name: 'Twin', phoneNumber, variables: { agent_name: 'Sam', company_name: 'Acme' } };
    const results = await Promise.all(Array.from({ length: 4 }, () => app.gql(CREATE_AGENT, { input }, token)));
    expect(results.filter((result) => !result.errors)).toHaveLength(1);
    for (const result of results.filter((r) => r.errors)) {
      expect(result.errors![0]!.extensions).toEqual({
        code: 'BAD_USER_INPUT',
        fieldErrors: { phoneNumber: ['This number already belongs to another active agent.'] },
      });
    }
    expect(await rowCounts()).toEqual({ agents: before.agents + 1, phoneNumbers: before.phoneNumbers + 1 });
  });

  it('rejects a template id that is not a UUID before any resolver runs', async () => {
    const result = await app.gql(
      CREATE_AGENT,
      { input: { templateId: 'nope', name: 'x', phoneNumber: nextPhoneNumber() } },
      await app.token(),
    );
    expect(result.errors![0]!.message).toMatch(/templateId/);
  });
});

describe('reading and archiving agents', () => {
  it('agent(id) returns the agent with its template, numbers and campaigns', async () => {
    const owner = randomUUID();
    const token = await app.token(owner);
    const agent = await createAgent(app, token, { name: 'Nested' });
    await insertCampaign(app, owner, agent.id, 'Campaign A');
    await insertCampaign(app, owner, agent.id, 'Campaign B', 'running');
    const result = await app.gql(
      `query($id: UUID!) { agent(id: $id) { name template { name } phoneNumbers { number }
        campaigns(first: 10) { totalCount edges { node { name status } } } } }`,
      { id: agent.id },
      token,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data.agent.name).toBe('Nested');
    expect(result.data.agent.template.name).toBe('Appointment Setter');
    expect(result.data.agent.campaigns.totalCount).toBe(2);
    expect(result.data.agent.campaigns.edges.map((e: any) => e.node.name).sort()).toEqual(['Campaign A', 'Campaign B']);
  });

  it('another user’s agent is NOT_FOUND for read and for archive, and stays active', async () => {
    const agent = await createAgent(app, await app.token());
    const stranger = await app.token();
    const read = await app.gql('query($id: UUID!) { agent(id: $id) { id } }', { id: agent.id }, stranger);
    expect(read.data).toEqual({ agent: null });
    expect(read.errors![0]!.extensions!.code).toBe('NOT_FOUND');
    const archive = await app.gql('mutation($id: UUID!) { archiveAgent(id: $id) { id } }', { id: agent.id }, stranger);
    expect(archive.errors![0]!.extensions!.code).toBe('NOT_FOUND');
    expect(await app.prisma.agent.findUniqueOrThrow({ where: { id: agent.id } })).toMatchObject({ isActive: true });
    const list = await app.gql('{ agents(first: 50) { totalCount edges { node { id } } } }', {}, stranger);
    expect(list.data.agents.totalCount).toBe(0);
  });

  it('archiveAgent archives, and the agents connection filters by status', async () => {
    const token = await app.token();
    const keep = await createAgent(app, token, { name: 'Keep' });
    const gone = await createAgent(app, token, { name: 'Gone' });
    const archived = await app.gql('mutation($id: UUID!) { archiveAgent(id: $id) { status isActive } }', { id: gone.id }, token);
    expect(archived.data.archiveAgent).toEqual({ status: 'archived', isActive: false });
    const names = async (status?: string) => {
      const result = await app.gql(
        'query($status: AgentStatus) { agents(first: 10, status: $status) { totalCount edges { node { name } } } }',
        { status },
        token,
      );
      return result.data.agents.edges.map((e: any) => e.node.name).sort();
    };
    expect(await names('active')).toEqual(['Keep']);
    expect(await names('archived')).toEqual(['Gone']);
    expect(await names()).toEqual(['Gone', 'Keep']);
    expect(keep.id).toBeDefined();
  });

  it('pages through the agents connection with cursors', async () => {
    const token = await app.token();
    for (const name of ['A', 'B', 'C']) await createAgent(app, token, { name });
    const page = (after?: string) =>
      app.gql(
        'query($after: String) { agents(first: 2, after: $after) { pageInfo { hasNextPage endCursor } edges { node { name } } } }',
        { after },
        token,
      );
    const first = await page();
    expect(first.data.agents.edges.map((e: any) => e.node.name)).toEqual(['C', 'B']);
    expect(first.data.agents.pageInfo.hasNextPage).toBe(true);
    const second = await page(first.data.agents.pageInfo.endCursor);
    expect(second.data.agents.edges.map((e: any) => e.node.name)).toEqual(['A']);
    expect(second.data.agents.pageInfo.hasNextPage).toBe(false);
  });
});

describe('a nested read costs a constant number of SQL statements', () => {
  const NESTED = `query { agents(first: 100) { totalCount edges { node {
      id name template { name templateKey } phoneNumbers { number label }
      campaigns(first: 5) { totalCount edges { node { id name status } } } } } } }`;

  async function statementsFor(count: number) {
    const owner = randomUUID();
    const token = await app.token(owner);
    await app.gql('{ agentTemplates { id } }', {}, token); // creates the user row
    const template = await templateId(app);
    const group = await app.prisma.contactGroup.create({ data: { userId: owner, name: 'g' } });
    for (let i = 0; i < count; i += 1) {
      const agent = await app.prisma.agent.create({
        data: { userId: owner, templateId: template, name: `Agent ${i}`, responseEngineType: 'retell-llm', systemPrompt: 'p' },
      });
      await app.prisma.phoneNumber.create({ data: { userId: owner, agentId: agent.id, number: `+1415666${String(i).padStart(4, '0')}` } });
      await app.prisma.campaign.createMany({
        data: [1, 2].map((n) => ({ userId: owner, agentId: agent.id, contactGroupId: group.id, name: `C${n}` })),
      });
    }
    const before = app.db.statementCount();
    const result = await app.gql(NESTED, {}, token);
    const statements = app.db.statementCount() - before;
    expect(result.errors).toBeUndefined();
    expect(result.data.agents.totalCount).toBe(count);
    expect(result.data.agents.edges[0].node.campaigns.totalCount).toBe(2);
    expect(result.data.agents.edges[0].node.phoneNumbers).toHaveLength(1);
    return statements;
  }

  it('is the same for 5 and for 50 agents', async () => {
    const five = await statementsFor(5);
    const fifty = await statementsFor(50);
    expect(fifty).toBe(five);
    expect(five).toBeGreaterThanOrEqual(1);
    expect(five).toBeLessThanOrEqual(2);
  });
});

describe('agent templates', () => {
  const CREATE = `mutation($input: CreateAgentTemplateInput!) { createAgentTemplate(input: $input) { id templateKey isActive } }`;
  const input = {
    templateKey: 'win_back',
    name: 'Win-back',
    systemPromptTemplate: 'You are {{ agent_name }}.',
    placeholderSchema: { type: 'object', properties: { agent_name: { type: 'string' } }, required: ['agent_name'] },
  };

  it('agentTemplates and agentTemplate(id) read the seeded templates', async () => {
    const token = await app.token();
    const list = await app.gql('{ agentTemplates { id templateKey placeholderSchema } }', {}, token);
    expect(list.data.agentTemplates).toHaveLength(5);
    const one = await app.gql('query($id: UUID!) { agentTemplate(id: $id) { name } }', { id: list.data.agentTemplates[0].id }, token);
    expect(one.data.agentTemplate.name).toBeTruthy();
    const missing = await app.gql('query($id: UUID!) { agentTemplate(id: $id) { name } }', { id: randomUUID() }, token);
    expect(missing.errors![0]!.extensions!.code).toBe('NOT_FOUND');
  });

  it('createAgentTemplate and updateAgentTemplate are refused to non-admins and change nothing', async () => {
    const before = await app.prisma.agentTemplate.count();
    const created = await app.gql(CREATE, { input }, await app.token());
    expect(created.errors![0]!.extensions!.code).toBe('FORBIDDEN');
    const target = await templateId(app, 'customer_survey');
    const updated = await app.gql(
      'mutation($id: UUID!) { updateAgentTemplate(id: $id, input: { name: "Hacked" }) { name } }',
      { id: target },
      await app.token(),
    );
    expect(updated.errors![0]!.extensions!.code).toBe('FORBIDDEN');
    expect(await app.prisma.agentTemplate.count()).toBe(before);
    expect((await app.prisma.agentTemplate.findUniqueOrThrow({ where: { id: target } })).name).toBe('Customer Survey');
  });

  it('an admin creates and updates templates, with the schema checked', async () => {
    const admin = await app.token(randomUUID(), 'admin');
    const created = await app.gql(CREATE, { input }, admin);
    expect(created.errors).toBeUndefined();
    expect(created.data.createAgentTemplate).toMatchObject({ templateKey: 'win_back', isActive: true });

    const duplicate = await app.gql(CREATE, { input }, admin);
    expect(duplicate.errors![0]!.extensions!.fieldErrors).toEqual({ templateKey: ['An agent template with this key already exists.'] });

    const badSchema = await app.gql(CREATE, { input: { ...input, templateKey: 'bad', placeholderSchema: { type: 'string' } } }, admin);
    expect(badSchema.errors![0]!.extensions!.fieldErrors.placeholderSchema).toHaveLength(1);
    const brokenSchema = await app.gql(
      CREATE,
      { input: { ...input, templateKey: 'broken', placeholderSchema: { type: 'object', properties: { a: { type: 'nonsense' } } } } },
      admin,
    );
    expect(brokenSchema.errors![0]!.extensions!.fieldErrors.placeholderSchema[0]).toMatch(/Not a valid JSON Schema/);

    const updated = await app.gql(
      'mutation($id: UUID!) { updateAgentTemplate(id: $id, input: { isActive: false, name: "Win back (old)" }) { name isActive } }',
      { id: created.data.createAgentTemplate.id },
      admin,
    );
    expect(updated.data.updateAgentTemplate).toEqual({ name: 'Win back (old)', isActive: false });
    // Customers no longer see it.
    const visible = await app.gql('{ agentTemplates { templateKey } }', {}, await app.token());
    expect(visible.data.agentTemplates.map((t: any) => t.templateKey)).not.toContain('win_back');
  });
});
