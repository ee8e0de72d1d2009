import type OpenAI from 'openai';
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { aiDisclosure, AI_DISCLOSURE_SENTENCE, carriesDisclosure } from '../../calling-rules/disclosure.js';
import { placeOfNumber } from '../../calling-rules/places.js';
import type { ServiceEnv } from '../../context.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { parseRetellFrame, type BrainFrame, type RetellFrame, type Utterance } from './frames.js';
import { saveTranscript, type BrainCall } from './store.js';

// One call's conversation over Retell's LLM socket: the begin message (the AI disclosure first where
// the callee's region requires it), then for each `response_required` a chat completion streamed from
// the configured OpenAI-compatible server, every content delta forwarded the moment it arrives, tool
// calls run through the in-call tools' runner and the completion continued with their answers. A newer
// request cancels the one in flight. The LLM failing or going quiet ends the call with a polite line.

/** The agents' response engine answered by this brain (Retell is given our socket as its custom LLM). */
export const BRAIN_ENGINE = 'builtin-llm';

/** Said when the LLM fails or times out, and the call ends. */
export const CLOSING_LINE = "I'm sorry, I'm having trouble on my end right now. Someone will get back to you soon. Goodbye!";

/** What the silence after a question asks of the LLM (Retell's `reminder_required`). */
const REMINDER = '(The callee has said nothing for a while. Check, briefly and politely, whether they are still there.)';

/** Tool rounds within one response before the brain stops calling tools and closes. */
const MAX_TOOL_ROUNDS = 5;

export interface LlmSettings {
  client: OpenAI;
  model: string;
  /** How long the LLM may stay silent (before its first token, or between two) before it has failed. */
  timeoutMs: number;
}

/** The call a tool runs for, as the in-call tools' runner finds it. */
export interface BrainToolCall {
  attemptId: string;
  providerCallId: string;
}

/** The in-call tools the LLM may call, and where they run: the same runner Retell's custom functions use. */
export interface BrainTools {
  definitions(): readonly ChatCompletionFunctionTool[];
  run(env: ServiceEnv, call: BrainToolCall, name: string, args: unknown): Promise<Record<string, unknown>>;
}

export interface BrainDeps extends ServiceEnv {
  llm: LlmSettings;
  tools: BrainTools;
}

class Superseded extends Error {}
class LlmTimeout extends Error {}

export class Conversation {
  /** The transcript as Retell last sent it. */
  private heard: Utterance[] = [];
  /** The transcript as last kept, and the text written for it. */
  private known: readonly Utterance[] = [];
  private written: string | undefined;
  private current: { id: number; controller: AbortController } | undefined;
  private writes: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly deps: BrainDeps,
    private readonly call: BrainCall,
    private readonly providerCallId: string,
    private readonly send: (frame: BrainFrame) => void,
  ) {}

  /** The config and the begin message; a socket Retell reopens after a drop says nothing new. */
  start(): void {
    this.send({ response_type: 'config', config: { auto_reconnect: true, call_details: false } });
    if (this.call.transcript !== null) {
      this.send({ response_type: 'response', response_id: 0, content: '', content_complete: true });
      return;
    }
    const content = this.beginMessage();
    this.send({ response_type: 'response', response_id: 0, content, content_complete: true });
    this.keepTranscript(content ? [{ role: 'agent', content }] : []);
  }

  receive(text: string): void {
    const parsed = parseRetellFrame(text);
    if ('error' in parsed) {
      this.deps.log.warn({ providerCallId: this.providerCallId, error: parsed.error }, 'brain: refused a malformed frame');
      return;
    }
    this.handle(parsed.frame);
  }

  /** The socket closed: the answer in flight is dropped and the transcript kept. */
  async close(): Promise<void> {
    this.closed = true;
    this.current?.controller.abort(new Superseded());
    this.current = undefined;
    this.keepTranscript(this.heard.length >= this.known.length ? this.heard : this.known);
    await this.writes;
  }

  private handle(frame: RetellFrame): void {
    switch (frame.interaction_type) {
      case 'ping_pong':
        this.send({ response_type: 'ping_pong', timestamp: frame.timestamp });
        return;
      case 'call_details':
        return;
      case 'update_only':
        this.heard = frame.transcript;
        return;
      case 'response_required':
      case 'reminder_required':
        this.heard = frame.transcript;
        this.current?.controller.abort(new Superseded());
        this.current = { id: frame.response_id, controller: new AbortController() };
        void this.respond(this.current, frame.interaction_type === 'reminder_required');
    }
  }

  private beginMessage(): string {
    const profile = this.call.agentProfile;
    const greeting = typeof profile.begin_message === 'string' ? profile.begin_message.trim() : '';
    const region = this.call.contactRegion ?? (this.call.toNumber ? placeOfNumber(this.call.toNumber).region : null);
    const disclosure = aiDisclosure(region, this.deps.clock.now());
    // A greeting that already discloses (the templates' begin message does) is not told twice.
    if (!disclosure.required || carriesDisclosure(greeting)) return greeting;
    this.deps.log.info(
      { providerCallId: this.providerCallId, region, rule: disclosure.rule?.name ?? 'unknown region' },
      'brain: AI disclosure',
    );
    return greeting ? `${AI_DISCLOSURE_SENTENCE} ${greeting}` : AI_DISCLOSURE_SENTENCE;
  }

  private async respond(turn: { id: number; controller: AbortController }, reminder: boolean): Promise<void> {
    const live = () => !this.closed && this.current === turn;
    // `last` marks the response's final frame, with how the call goes on.
    const say = (content: string, last?: { end_call?: true; transfer_number?: string }) => {
      if (live()) this.send({ response_type: 'response', response_id: turn.id, content, content_complete: last !== undefined, ...last });
    };
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: this.call.systemPrompt },
      ...this.heard.map((u): ChatCompletionMessageParam => ({ role: u.role === 'agent' ? 'assistant' : 'user', content: u.content })),
    ];
    if (reminder) messages.push({ role: 'system', content: REMINDER });
    let spoken = '';
    try {
      for (let round = 0; round < MAX_TOOL_ROUNDS; round += 1) {
        const { content, toolCalls } = await this.complete(messages, turn.controller.signal, (delta) => {
          spoken += delta;
          say(delta);
        });
        if (!toolCalls.length) {
          say('', {});
          return;
        }
        messages.push({ role: 'assistant', content: content || null, tool_calls: toolCalls });
        for (const toolCall of toolCalls) {
          const { name } = toolCall.function;
          if (name === 'end_call') {
            say('', { end_call: true });
            return;
          }
          if (!live()) return;
          this.send({ response_type: 'tool_call_invocation', tool_call_id: toolCall.id, name, arguments: toolCall.function.arguments });
          const answer = await this.runTool(name, toolCall.function.arguments);
          const result = JSON.stringify(answer);
          if (!live()) return;
          this.send({ response_type: 'tool_call_result', tool_call_id: toolCall.id, content: result });
          if (typeof answer.transfer_number === 'string') {
            say('', { transfer_number: answer.transfer_number });
            return;
          }
          messages.push({ role: 'tool', tool_call_id: toolCall.id, content: result });
        }
      }
      this.deps.log.warn({ providerCallId: this.providerCallId, rounds: MAX_TOOL_ROUNDS }, 'brain: too many tool rounds in one response');
      say(CLOSING_LINE, { end_call: true });
      spoken += CLOSING_LINE;
    } catch (error) {
      if (error instanceof Superseded || !live()) return;
      this.deps.log.error(
        { err: error, providerCallId: this.providerCallId, timedOut: error instanceof LlmTimeout },
        'brain: the LLM failed; closing the call',
      );
      say(spoken ? ` ${CLOSING_LINE}` : CLOSING_LINE, { end_call: true });
      spoken += CLOSING_LINE;
    } finally {
      if (live()) this.keepTranscript([...this.heard, { role: 'agent', content: spoken }]);
    }
  }

  /** One streamed completion: content deltas handed on at once, tool calls put together from theirs. */
  private async complete(messages: ChatCompletionMessageParam[], turnSignal: AbortSignal, onDelta: (delta: string) => void) {
    const { client, model, timeoutMs } = this.deps.llm;
    const controller = new AbortController();
    const abort = () => controller.abort(turnSignal.reason);
    turnSignal.addEventListener('abort', abort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const quiet = () => {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(new LlmTimeout(`no token from the LLM within ${timeoutMs} ms`)), timeoutMs);
    };
    quiet();
    const temperature = this.call.llmRuntime.temperature;
    const tools = this.deps.tools.definitions();
    try {
      const stream = await client.chat.completions.create(
        {
          model,
          messages,
          stream: true,
          ...(tools.length ? { tools: [...tools] } : {}),
          ...(typeof temperature === 'number' ? { temperature } : {}),
        },
        { signal: controller.signal },
      );
      let content = '';
      const calls: { id: string; name: string; arguments: string }[] = [];
      for await (const chunk of stream) {
        quiet();
        const delta = chunk.choices[0]?.delta;
        if (!delta) continue;
        if (delta.content) {
          content += delta.content;
          onDelta(delta.content);
        }
        for (const part of delta.tool_calls ?? []) {
          const call = (calls[part.index] ??= { id: '', name: '', arguments: '' });
          if (part.id) call.id = part.id;
          if (part.function?.name) call.name += part.function.name;
          if (part.function?.arguments) call.arguments += part.function.arguments;
        }
      }
      // The SDK ends a stream it was told to abort as if it had finished.
      if (controller.signal.aborted) throw controller.signal.reason;
      const toolCalls = calls
        .filter((c) => c.name)
        .map((c, i): ChatCompletionMessageFunctionToolCall => ({
          id: c.id || `call_${i}`,
          type: 'function',
          function: { name: c.name, arguments: c.arguments || '{}' },
        }));
      return { content, toolCalls };
    } catch (error) {
      // The SDK reports an abort as its own error; the reason says whether it was a newer turn or the timer.
      throw controller.signal.aborted ? controller.signal.reason : error;
    } finally {
      clearTimeout(timer);
      turnSignal.removeEventListener('abort', abort);
    }
  }

  /** A tool's answer for the LLM; a refusal or a failure is an answer too, so the conversation goes on. */
  private async runTool(name: string, text: string): Promise<Record<string, unknown>> {
    let args: unknown;
    try {
      args = JSON.parse(text || '{}');
    } catch {
      return { error: 'invalid_arguments', message: 'The arguments were not JSON.' };
    }
    try {
      return await this.deps.tools.run(this.deps, { attemptId: this.call.id, providerCallId: this.providerCallId }, name, args);
    } catch (error) {
      // The call is over, or the tool is not one we serve: the LLM is told so, as any refusal.
      if (error instanceof ConflictError || error instanceof NotFoundError) return { error: 'refused', message: error.message };
      this.deps.log.warn({ err: error, tool: name, providerCallId: this.providerCallId }, 'brain: in-call tool failed');
      return { error: 'tool_failed', message: 'That could not be done just now.' };
    }
  }

  /** Written at turn ends and when the socket closes, never per token; one write at a time, in order. */
  private keepTranscript(utterances: readonly Utterance[]): void {
    this.known = utterances;
    const text = utterances
      .filter((u) => u.content)
      .map((u) => `${u.role === 'agent' ? 'Agent' : 'User'}: ${u.content}`)
      .join('\n');
    if (text === this.written || (!text && this.written === undefined)) return;
    this.written = text;
    const now = this.deps.clock.now();
    this.writes = this.writes
      .then(() => saveTranscript(this.deps.sql, this.call.id, text, now))
      .catch((error: unknown) => this.deps.log.warn({ err: error, attemptId: this.call.id }, 'brain: transcript not saved'));
  }
}
