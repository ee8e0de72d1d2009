import type { TestApp } from './app.js';

export const CREATE_AGENT = /* GraphQL */ `
  mutation CreateAgent($input: CreateAgentInput!) {
    createAgent(input: $input) {
      id
      name
      status
      isActive
      systemPrompt
      phoneNumbers {
        id
        number
        isPrimary
      }
    }
  }
`;

let numberSeq = 100;

/** A valid US number no other test fixture uses. */
export function nextPhoneNumber(): string {
  numberSeq += 1;
  return `+1415555${String(numberSeq).padStart(4, '0')}`;
}

export async function templateId(app: TestApp, key = 'appointment_setter'): Promise<string> {
  const template = await app.prisma.agentTemplate.findUniqueOrThrow({ where: { templateKey: key } });
  return template.id;
}

/** Creates an agent through the public GraphQL mutation, as a client would. */
export async function createAgent(app: TestApp, token: string, overrides: Record<string, unknown> = {}) {
  const result = await app.gql(
    CREATE_AGENT,
    {
      input: {
        templateId: await templateId(app),
        name: 'Front desk',
        phoneNumber: nextPhoneNumber(),
        variables: { agent_name: 'Sam', company_name: 'Acme Dental' },
        ...overrides,
      },
    },
    token,
  );
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data.createAgent as { id: string; name: string; systemPrompt: string; phoneNumbers: { id: string; number: string }[] };
}

/** A campaign row for agent and group reads; the campaign service itself arrives with its own issue. */
export async function insertCampaign(app: TestApp, userId: string, agentId: string, name: string, status: 'draft' | 'running' = 'draft') {
  const group = await app.prisma.contactGroup.create({ data: { userId, name: `${name} group` } });
  return app.prisma.campaign.create({ data: { userId, agentId, contactGroupId: group.id, name, status } });
}
