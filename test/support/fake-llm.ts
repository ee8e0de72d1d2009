import type { IncomingMessage, ServerResponse } from 'node:http';
import { LocalFake, reply } from './local-fake.js';

// An OpenAI-compatible chat-completions server, as the openai package's streaming client reads it
// (POST /chat/completions with stream: true; server-sent events of `chat.completion.chunk` objects, tool
// calls as `delta.tool_calls` fragments, then `data: [DONE]`). What it answers is the test's script.

export interface ChatRequest {
  model: string;
  stream?: boolean;
  temperature?: number;
  messages: { role: string; content?: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; parameters: unknown } }[];
}

export type LlmReply =
  /** Text streamed a word (and its space) per chunk, the first after `firstTokenMs`, the others `tokenMs` apart; then tool calls, if any. */
  | { text?: string; firstTokenMs?: number; tokenMs?: number; toolCalls?: { name: string; arguments: string }[] }
  /** An HTTP error in OpenAI's error shape. */
  | { status: number }
  /** Headers, then nothing: the LLM went quiet. */
  | { hang: true };

export class FakeLlm extends LocalFake {
  readonly requests: ChatRequest[] = [];
  /** When each request's first content chunk was written (performance.now()), by request index. */
  readonly firstTokenAt = new Map<number, number>();
  /** Requests whose client went away before the answer was whole (a cancelled completion), by index. */
  readonly cancelled = new Set<number>();
  private readonly open = new Set<ServerResponse>();

  constructor(private readonly script: (request: ChatRequest, index: number) => LlmReply) {
    super();
  }

  override async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    await super.close();
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) return reply(res, 404, { error: { message: 'Not found' } });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
    const index = this.requests.push(request) - 1;
    const answer = this.script(request, index);
    if ('status' in answer) {
      return reply(res, answer.status, { error: { message: 'The server had an error', type: 'server_error', code: null } });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    this.open.add(res);
    res.on('close', () => {
      this.open.delete(res);
      if (!res.writableFinished) this.cancelled.add(index);
    });
    if ('hang' in answer) return;
    const id = `chatcmpl-${index}`;
    const send = (delta: Record<string, unknown>, finish: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: request.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
      );
    send({ role: 'assistant', content: '' });
    const words = answer.text ? (answer.text.match(/\S+\s*/g) ?? []) : [];
    if (answer.firstTokenMs) await new Promise((resolve) => setTimeout(resolve, answer.firstTokenMs));
    for (const [i, word] of words.entries()) {
      if (i > 0 && answer.tokenMs) await new Promise((resolve) => setTimeout(resolve, answer.tokenMs));
      if (res.destroyed) return;
      if (i === 0) this.firstTokenAt.set(index, performance.now());
      send({ content: word });
    }
    for (const [i, call] of (answer.toolCalls ?? []).entries()) {
      send({ tool_calls: [{ index: i, id: `call_${index}_${i}`, type: 'function', function: { name: call.name, arguments: '' } }] });
      // Arguments arrive in pieces, as real servers send them.
      for (let at = 0; at < call.arguments.length; at += 7) {
        send({ tool_calls: [{ index: i, function: { arguments: call.arguments.slice(at, at + 7) } }] });
      }
    }
    send({}, answer.toolCalls?.length ? 'tool_calls' : 'stop');
    res.end('data: [DONE]\n\n');
  }

  protected failure(error: unknown): unknown {
    return { error: { message: String(error) } };
  }
}

/** The last user utterance a request carries. */
export const lastUserText = (request: ChatRequest) => [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
