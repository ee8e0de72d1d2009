import OpenAI from 'openai';
import type { LlmSettings } from './conversation.js';

/** An OpenAI-compatible chat-completions server: OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server. */
export interface LlmServer {
  baseUrl: string;
  /** Local servers often need none. */
  apiKey: string | undefined;
  model: string;
  /** How long the LLM may stay silent before it has failed. */
  timeoutMs: number;
}

export function openLlm(server: LlmServer): LlmSettings {
  const client = new OpenAI({
    baseURL: server.baseUrl,
    // The SDK refuses to start without a key; servers that take none ignore the header.
    apiKey: server.apiKey ?? 'none',
    // A caller is waiting: a retry would come after the closing line should have.
    maxRetries: 0,
    timeout: server.timeoutMs,
  });
  return { client, model: server.model, timeoutMs: server.timeoutMs };
}
