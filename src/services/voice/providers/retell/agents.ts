import type Retell from 'retell-sdk';
import type { AgentCreateParams, AgentResponse } from 'retell-sdk/resources/agent';
import type { LlmCreateParams } from 'retell-sdk/resources/llm';
import type { InCallToolDefinition } from '../../tools/definitions.js';
import { brainSocketUrl } from '../../brain/socket-url.js';
import { ProviderError, type AgentSpec, type Inspection, type Provisioned, type ProviderIds, type VoiceProvider } from '../../provider.js';
import { isNotFound, providerError, retellClient, type RetellClientOptions } from './client.js';

// Provisioning at Retell (docs/agents.md): a Retell LLM with our prompt, model and in-call tools, and a
// voice agent answering with it (or with the customer's own LLM server), published as a new version on
// every change; the agent's numbers name it as their outbound agent.

export interface RetellProvisioningOptions extends RetellClientOptions {
  /** Where Retell reaches us (PUBLIC_BASE_URL): the agent's webhooks and the tools' endpoints. Unset: neither is set. */
  publicBaseUrl: string | undefined;
}

/** The provider's name of our agent: how a retry finds an agent a try made before it could store the id. */
export const providerAgentName = (agentId: string) => `callflow:${agentId}`;
/** The same mark on the LLM, which has no name: a default dynamic variable. */
const LLM_MARK = 'callflow_agent_id';

type Step = <T>(asked: string, call: () => Promise<T>) => Promise<T>;

export class RetellVoiceProvider implements VoiceProvider {
  readonly name = 'retell';
  private readonly client: Retell;

  constructor(private readonly options: RetellProvisioningOptions) {
    this.client = retellClient(options);
  }

  async provision(spec: AgentSpec, known: ProviderIds, learned: (ids: ProviderIds) => Promise<void>): Promise<Provisioned> {
    const ids = { ...known };
    if (!ids.agentId) {
      const found = await step('list-agents', () => this.findAgent(spec.agentId));
      if (found) {
        const agent = await step('get-agent', () => this.client.agent.retrieve(found.agent_id));
        ids.agentId = agent.agent_id;
        if (agent.response_engine.type === 'retell-llm') ids.llmId = agent.response_engine.llm_id;
        await learned(ids);
      }
    }
    let engine: AgentCreateParams['response_engine'];
    if (spec.engine.type === 'retell-llm') {
      const llm = this.llmParams(spec, spec.engine.tools);
      if (!ids.llmId) {
        ids.llmId = (await step('list-retell-llms', () => this.findLlm(spec.agentId))) ?? null;
        if (ids.llmId) await learned(ids);
      }
      if (ids.llmId) {
        const llmId = ids.llmId;
        await step('update-retell-llm', () => this.client.llm.update(llmId, llm));
      } else {
        ids.llmId = (await step('create-retell-llm', () => this.client.llm.create(llm))).llm_id;
        await learned(ids);
      }
      engine = { type: 'retell-llm', llm_id: ids.llmId };
    } else if (spec.engine.type === 'builtin-llm') {
      if (!this.options.publicBaseUrl)
        throw new ProviderError('PUBLIC_BASE_URL is not set: Retell cannot reach the built-in agent.', false);
      engine = { type: 'custom-llm', llm_websocket_url: brainSocketUrl(this.options.publicBaseUrl, spec.engine.socketToken) };
    } else {
      engine = { type: 'custom-llm', llm_websocket_url: spec.engine.websocketUrl };
    }
    const params = { ...this.agentParams(spec), response_engine: engine };
    let agent: AgentResponse;
    if (ids.agentId) {
      const agentId = ids.agentId;
      agent = await step('update-agent', () => this.client.agent.update(agentId, params));
    } else {
      agent = await step('create-agent', () => this.client.agent.create(params));
      ids.agentId = agent.agent_id;
      await learned(ids);
    }
    const agentId = agent.agent_id;
    await step('publish-agent-version', () => this.client.agent.publish(agentId, { version: agent.version }));
    for (const number of spec.numbers) {
      await step(`update-phone-number ${number}`, () =>
        this.client.phoneNumber.update(number, { outbound_agents: [{ agent_id: agentId, agent_version: agent.version, weight: 1 }] }),
      );
    }
    const published = await step('get-agent', () => this.client.agent.retrieve(agentId));
    return { llmId: ids.llmId, agentId, version: agent.version, modifiedAt: published.last_modification_timestamp };
  }

  async remove(known: ProviderIds, numbers: string[]): Promise<void> {
    for (const number of numbers) {
      await gone(`update-phone-number ${number}`, () => this.client.phoneNumber.update(number, { outbound_agents: [] }));
    }
    const { agentId, llmId } = known;
    if (agentId) await gone('delete-agent', () => this.client.agent.delete(agentId));
    if (llmId) await gone('delete-retell-llm', () => this.client.llm.delete(llmId));
  }

  async inspect(agentId: string): Promise<Inspection> {
    try {
      const agent = await this.client.agent.retrieve(agentId);
      return { present: true, modifiedAt: agent.last_modification_timestamp };
    } catch (error) {
      if (isNotFound(error)) return { present: false };
      throw providerError(error, 'get-agent');
    }
  }

  private async findAgent(agentId: string) {
    const name = providerAgentName(agentId);
    const page = await this.client.agent.list({ filter_criteria: { query: name } });
    return page.items.find((item) => item.agent_name === name);
  }

  private async findLlm(agentId: string): Promise<string | undefined> {
    let pagination_key: string | undefined;
    for (;;) {
      const page = await this.client.llm.list({ limit: 1000, ...(pagination_key ? { pagination_key } : {}) });
      const found = page.items.find((llm) => llm.default_dynamic_variables?.[LLM_MARK] === agentId);
      if (found) return found.llm_id;
      if (!page.has_more || !page.pagination_key) return undefined;
      pagination_key = page.pagination_key;
    }
  }

  private llmParams(spec: AgentSpec, tools: readonly InCallToolDefinition[]) {
    const base = this.options.publicBaseUrl;
    const custom = base
      ? tools.map((tool) => ({
          type: 'custom' as const,
          name: tool.name,
          description: tool.description,
          url: `${base}/voice/retell/tools/${tool.name}`,
          parameters: tool.parameters,
          speak_during_execution: false,
          speak_after_execution: true,
        }))
      : [];
    return {
      general_prompt: spec.prompt,
      begin_message: spec.beginMessage,
      // Retell lists the models it offers; one it does not is its 400, shown on the agent.
      model: spec.model as LlmCreateParams['model'],
      ...(spec.temperature === null ? {} : { model_temperature: spec.temperature }),
      // The agent's transfer number is the default; the dialer passes a campaign's own per call.
      default_dynamic_variables: { [LLM_MARK]: spec.agentId, ...(spec.transferNumber ? { transfer_number: spec.transferNumber } : {}) },
      general_tools: [
        { type: 'end_call' as const, name: 'end_call', description: 'Hang up once the conversation is over.' },
        ...custom,
        ...(spec.transferNumber
          ? [
              {
                type: 'transfer_call' as const,
                name: 'transfer_call',
                description: 'Transfers the call to a person at the business, when the callee asks for one.',
                transfer_destination: { type: 'predefined' as const, number: '{{transfer_number}}' },
                transfer_option: { type: 'cold_transfer' as const },
              },
            ]
          : []),
      ],
    } satisfies LlmCreateParams;
  }

  private agentParams(spec: AgentSpec) {
    const base = this.options.publicBaseUrl;
    return {
      agent_name: providerAgentName(spec.agentId),
      voice_id: spec.voiceId ?? '',
      ...(spec.language ? { language: spec.language as AgentCreateParams['language'] } : {}),
      ...(spec.voiceSpeed === null ? {} : { voice_speed: spec.voiceSpeed }),
      ...(spec.interruptionSensitivity === null ? {} : { interruption_sensitivity: spec.interruptionSensitivity }),
      // The dialer hands the campaign's rendered voicemail message as this variable (docs/decisions.md, Retell).
      voicemail_option: { action: { type: 'static_text' as const, text: '{{voicemail_message}}' } },
      ...(base ? { webhook_url: `${base}/webhooks/retell` } : {}),
    };
  }
}

const step: Step = async (asked, call) => {
  try {
    return await call();
  } catch (error) {
    throw providerError(error, asked);
  }
};

/** A removal of something Retell no longer has is done already. */
async function gone(asked: string, call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (!isNotFound(error)) throw providerError(error, asked);
  }
}
