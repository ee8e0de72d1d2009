import { z } from 'zod';
import type { AgentTemplate } from '../../generated/prisma/client.js';
import type { AgentWithRelations } from '../../services/agents/with-relations.js';
import { datetime, id, iso, json } from './common.js';

// The v1 shapes of agent templates (contract 2.5) and agents (2.4).

export const v1AgentTemplate = z
  .object({
    id,
    name: z.string(),
    description: z.string(),
    template_key: z.string(),
    system_prompt_template: z.string(),
    placeholder_schema: json,
    agent_profile_defaults: json,
    llm_runtime_defaults: json,
    response_engine_type: z.string(),
    is_active: z.boolean(),
    created_at: datetime,
    updated_at: datetime,
  })
  .meta({ id: 'AgentTemplate' });

export const v1PhoneNumber = z.object({ id, number: z.string(), label: z.string(), is_primary: z.boolean() }).meta({ id: 'PhoneNumber' });

export const v1AgentCampaign = z.object({ id, name: z.string(), status: z.string() }).meta({ id: 'AgentCampaign' });

export const v1Agent = z
  .object({
    id,
    user_id: id,
    template_id: id,
    name: z.string().max(255),
    created_at: datetime,
    updated_at: datetime,
    agent_templates: v1AgentTemplate,
    phone_numbers: z.array(v1PhoneNumber),
    campaigns: z.array(v1AgentCampaign),
    status: z.string().max(32),
    is_active: z.boolean(),
    phone_number_id: id.nullable(),
    response_engine_type: z.string().max(32),
    llm_websocket_url: z.string().max(200).nullable(),
    agent_config: json,
    agent_profile: json,
    agent_variables: json,
    llm_runtime_overrides: json,
  })
  .meta({ id: 'Agent' });

export function toV1AgentTemplate(t: AgentTemplate | AgentWithRelations['template']): z.input<typeof v1AgentTemplate> {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    template_key: t.templateKey,
    system_prompt_template: t.systemPromptTemplate,
    placeholder_schema: t.placeholderSchema,
    agent_profile_defaults: t.agentProfileDefaults,
    llm_runtime_defaults: t.llmRuntimeDefaults,
    response_engine_type: t.responseEngineType,
    is_active: t.isActive,
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
  };
}

export function toV1Agent(a: AgentWithRelations): z.input<typeof v1Agent> {
  return {
    id: a.id,
    user_id: a.userId,
    template_id: a.templateId,
    name: a.name,
    created_at: iso(a.createdAt),
    updated_at: iso(a.updatedAt),
    agent_templates: toV1AgentTemplate(a.template),
    phone_numbers: a.phoneNumbers.map((p) => ({ id: p.id, number: p.number, label: p.label, is_primary: p.isPrimary })),
    campaigns: a.campaigns.map((c) => ({ id: c.id, name: c.name, status: c.status })),
    status: a.status,
    is_active: a.isActive,
    phone_number_id: a.phoneNumberId,
    response_engine_type: a.responseEngineType,
    llm_websocket_url: a.llmWebsocketUrl,
    agent_config: a.agentConfig,
    agent_profile: a.agentProfile,
    agent_variables: a.agentVariables,
    llm_runtime_overrides: a.llmRuntimeOverrides,
  };
}
