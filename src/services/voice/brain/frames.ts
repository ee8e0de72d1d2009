import { z } from 'zod';

// Retell's LLM WebSocket protocol (docs.retellai.com/api-references/llm-websocket): every message is a
// text frame holding one JSON object. Retell sends `interaction_type` frames; we answer with
// `response_type` frames. Unknown extra fields are kept out of our types but never refused: Retell adds
// fields over time.

export const utterance = z.object({ role: z.enum(['agent', 'user']), content: z.string().max(100_000) });
export type Utterance = z.output<typeof utterance>;

/** The conversation so far as Retell heard it; a long call's is long, but not unbounded. */
const transcript = z.array(utterance).max(5_000);

export const retellFrame = z.discriminatedUnion('interaction_type', [
  z.object({ interaction_type: z.literal('ping_pong'), timestamp: z.number() }),
  z.object({ interaction_type: z.literal('call_details'), call: z.record(z.string(), z.unknown()) }),
  z.object({
    interaction_type: z.literal('update_only'),
    transcript,
    turntaking: z.enum(['agent_turn', 'user_turn']).optional(),
  }),
  z.object({ interaction_type: z.literal('response_required'), response_id: z.int().min(0), transcript }),
  z.object({ interaction_type: z.literal('reminder_required'), response_id: z.int().min(0), transcript }),
]);
export type RetellFrame = z.output<typeof retellFrame>;

/** One frame from Retell, or why it is not one (the socket stays open: a bad frame is logged and skipped). */
export function parseRetellFrame(text: string): { frame: RetellFrame } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: 'not JSON' };
  }
  const parsed = retellFrame.safeParse(value);
  if (!parsed.success) return { error: z.prettifyError(parsed.error) };
  return { frame: parsed.data };
}

export interface ConfigFrame {
  response_type: 'config';
  config: { auto_reconnect: boolean; call_details: boolean };
}

/** What the agent says: streamed as deltas of one response id, the last with `content_complete`. */
export interface ResponseFrame {
  response_type: 'response';
  response_id: number;
  content: string;
  content_complete: boolean;
  end_call?: boolean;
  transfer_number?: string;
}

export interface ToolCallInvocationFrame {
  response_type: 'tool_call_invocation';
  tool_call_id: string;
  name: string;
  /** The arguments as the JSON text the LLM wrote. */
  arguments: string;
}

export interface ToolCallResultFrame {
  response_type: 'tool_call_result';
  tool_call_id: string;
  content: string;
}

export interface PingPongFrame {
  response_type: 'ping_pong';
  timestamp: number;
}

export type BrainFrame = ConfigFrame | ResponseFrame | ToolCallInvocationFrame | ToolCallResultFrame | PingPongFrame;
