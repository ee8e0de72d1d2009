import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LlmCreateParams } from 'retell-sdk/resources/llm';
import { LocalFake, reply } from './local-fake.js';

// A local stand-in for Retell's API, speaking its protocol: POST /v2/create-phone-call with a bearer API
// key answers with a call object, and the call's webhooks (call_started, call_ended, call_analyzed) are
// then POSTed to our app, signed as Retell signs them: X-Retell-Signature `v=<unix ms>,d=<hex
// HMAC-SHA256(key, body + timestamp)>`. It also keeps Retell LLMs, agents with their versions (the latest
// is the draft; publishing it freezes it and starts the next draft) and phone numbers, and answers a
// request as the test injects: 429, 5xx, a timeout, or an error after it has acted (a cut-off answer).
// During a call, the agent's custom functions are POSTed to their URLs as `{ name, call, args }`, signed
// as webhooks are. Written from Retell's documentation and the paths and shapes of retell-sdk's types,
// independently of the code under test.

export interface Analysis {
  call_summary?: string;
  user_sentiment?: 'Positive' | 'Negative' | 'Neutral' | 'Unknown';
  call_successful?: boolean;
  in_voicemail?: boolean;
  custom_analysis_data?: Record<string, unknown>;
}

/** What happens to a call once create-phone-call is asked for it. */
export type Outcome =
  /** Connected: call_started, call_ended, call_analyzed. */
  | { kind: 'connected'; reason: string; durationMs: number; analysis: Analysis }
  /** Never connected: call_ended only (Retell sends no call_started then). */
  | { kind: 'not_connected'; reason: string }
  /** create-phone-call answers 400: the number is not valid. */
  | { kind: 'invalid_number' }
  /** The call is created and nothing more is sent: the test delivers its events itself. */
  | { kind: 'silent' };

/** What happens to calls to a number, chosen by the test. */
export type Script =
  | Outcome
  /** create-phone-call answers 429 (with Retry-After) once for this number, then plays `then`. */
  | { kind: 'rate_limited_once'; then: Outcome };

export interface CreatedCall {
  callId: string;
  body: Record<string, any>;
  authorization: string | undefined;
  createdAt: number;
}

export interface Delivery {
  callId: string;
  event: string;
  status: number;
  body: any;
}

/** What the next request of one operation meets, instead of (or after) being served. */
export type Fault =
  | { kind: 'status'; status: number; message?: string }
  /** Served, then answered with `status`, as when the answer is lost after Retell acted. */
  | { kind: 'after'; status: number }
  /** Not answered before `ms`, then served late. */
  | { kind: 'timeout'; ms: number };

export interface FakeAgentVersion {
  agent_id: string;
  version: number;
  is_published: boolean;
  last_modification_timestamp: number;
  [field: string]: unknown;
}

/** How a request to the app is signed: the webhook key unless told otherwise, or not at all. */
export interface SignOptions {
  key?: string;
  timestampMs?: number;
  signature?: string | null;
  tamper?: (body: string) => string;
}

export interface FakeRetellOptions {
  apiKey: string;
  webhookKey: string;
  /** Where webhooks go; settable after start, once the app's URL is known. */
  webhookUrl?: string;
  /** Where the agent's custom functions are, `<toolsUrl>/<name>`; settable after start. */
  toolsUrl?: string;
  script: (toNumber: string) => Script;
  /** The clock webhooks are signed with (unix ms). */
  now?: () => number;
}

// The LLM models Retell offers, as retell-sdk's types list them (a record of every one, so that the
// type check fails when the SDK's list changes); any other `model` is refused with a 400, as Retell does.
const MODELS: Record<NonNullable<LlmCreateParams['model']>, true> = {
  'gpt-4.1': true,
  'gpt-4.1-mini': true,
  'gpt-4.1-nano': true,
  'gpt-5': true,
  'gpt-5-mini': true,
  'gpt-5-nano': true,
  'gpt-5.1': true,
  'gpt-5.2': true,
  'gpt-5.4': true,
  'gpt-5.4-mini': true,
  'gpt-5.4-nano': true,
  'gpt-5.5': true,
  'gpt-5.6-terra': true,
  'gpt-5.6-luna': true,
  'claude-4.5-sonnet': true,
  'claude-4.6-sonnet': true,
  'claude-5-sonnet': true,
  'claude-4.5-haiku': true,
  'gemini-3.0-flash': true,
  'gemini-3.1-flash-lite': true,
  'gemini-3.5-flash': true,
  'gemini-3.5-flash-lite': true,
  'gemini-3.6-flash': true,
};
export const RETELL_MODELS: readonly string[] = Object.keys(MODELS);

export class FakeRetell extends LocalFake {
  readonly calls: CreatedCall[] = [];
  readonly requests: { to: string; status: number }[] = [];
  readonly deliveries: Delivery[] = [];
  webhookUrl: string | undefined;
  readonly llms = new Map<string, Record<string, any>>();
  /** Each agent's versions, oldest first; the last is its draft. */
  readonly agents = new Map<string, FakeAgentVersion[]>();
  readonly phoneNumbers = new Map<string, { phone_number: string; outbound_agents: unknown[] | null }>();
  /** Every API request but create-phone-call, as `operation` or `operation <id>`, with its answer's status. */
  readonly log: { operation: string; status: number }[] = [];
  private readonly faults = new Map<string, Fault[]>();
  toolsUrl: string | undefined;
  private readonly refusedOnce = new Set<string>();
  private clock = 0;

  constructor(private readonly options: FakeRetellOptions) {
    super();
    this.webhookUrl = options.webhookUrl;
    this.toolsUrl = options.toolsUrl;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  protected failure(error: unknown): unknown {
    return { status: 'error', message: String(error) };
  }

  /** Numbers the account has; create-phone-call takes any, update-phone-number only these (all unless set). */
  knownNumber: (number: string) => boolean = () => true;

  /** The next `times` requests of `operation` (create-agent, publish-agent-version, ...) meet `fault`. */
  inject(operation: string, fault: Fault, times = 1): void {
    this.faults.set(operation, [...(this.faults.get(operation) ?? []), ...Array<Fault>(times).fill(fault)]);
  }

  /** The agent's draft, as Retell's dashboard shows it. */
  latest(agentId: string): FakeAgentVersion | undefined {
    return this.agents.get(agentId)?.at(-1);
  }

  /** A person edits the agent's draft in Retell's dashboard. */
  editInDashboard(agentId: string, change: Record<string, unknown>): void {
    Object.assign(this.latest(agentId)!, change, { last_modification_timestamp: this.tick() });
  }

  /** A person deletes the agent in Retell's dashboard. */
  deleteInDashboard(agentId: string): void {
    this.agents.delete(agentId);
  }

  /** Strictly increasing modification times, as Retell's are. */
  private tick(): number {
    this.clock = Math.max(this.clock + 1, this.now());
    return this.clock;
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers.authorization !== `Bearer ${this.options.apiKey}`)
      return reply(res, 401, { status: 'error', message: 'API key is missing or invalid.' });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: Record<string, any>;
    try {
      const text = Buffer.concat(chunks).toString('utf8');
      body = text ? JSON.parse(text) : {};
    } catch {
      return reply(res, 400, { status: 'error', message: 'Invalid request format, please check API reference.' });
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    if (req.method === 'POST' && url.pathname === '/v2/create-phone-call')
      return this.createPhoneCall(res, body, req.headers.authorization);
    const [, operation = '', id] = url.pathname.slice(1).match(/^(v2\/[a-z-]+|[a-z-]+)(?:\/(.+))?$/) ?? [];
    const target = id === undefined ? undefined : decodeURIComponent(id);
    const fault = this.faults.get(operation)?.shift();
    const answer = (status: number, value?: unknown) => {
      this.log.push({ operation: target ? `${operation} ${target}` : operation, status });
      if (status === 204) {
        res.writeHead(204).end();
        return;
      }
      reply(res, status, value ?? {});
    };
    if (fault?.kind === 'status') {
      return answer(fault.status, { status: 'error', message: fault.message ?? `Injected ${fault.status}.` });
    }
    if (fault?.kind === 'timeout') await new Promise((resolve) => setTimeout(resolve, fault.ms));
    const served = this.serve(req.method ?? 'GET', operation, target, body, url.searchParams);
    if (fault?.kind === 'after') return answer(fault.status, { status: 'error', message: `Injected ${fault.status} after acting.` });
    if (!res.destroyed) answer(served.status, served.body);
  }

  /** One API request other than create-phone-call, as Retell answers it. */
  private serve(method: string, operation: string, id: string | undefined, body: Record<string, any>, query: URLSearchParams) {
    const notFound = { status: 404, body: { status: 'error', message: 'Not found.' } };
    const key = `${method} ${operation}`;
    const badModel = body.model !== undefined && body.model !== null && !RETELL_MODELS.includes(body.model);
    if ((key === 'POST create-retell-llm' || key === 'PATCH update-retell-llm') && badModel) {
      return { status: 400, body: { status: 'error', message: `model must be one of: ${RETELL_MODELS.join(', ')}.` } };
    }
    if (key === 'POST create-retell-llm') {
      const llm = {
        ...body,
        llm_id: `llm_${randomBytes(12).toString('hex')}`,
        version: 0,
        is_published: false,
        last_modification_timestamp: this.tick(),
      };
      this.llms.set(llm.llm_id, llm);
      return { status: 201, body: llm };
    }
    if (key === 'GET v2/list-retell-llms') return { status: 200, body: { items: [...this.llms.values()], has_more: false } };
    if (key === 'PATCH update-retell-llm' || key === 'GET get-retell-llm' || key === 'DELETE delete-retell-llm') {
      const llm = this.llms.get(id!);
      if (!llm) return notFound;
      if (method === 'DELETE') {
        this.llms.delete(id!);
        return { status: 204, body: undefined };
      }
      if (method === 'PATCH') Object.assign(llm, body, { last_modification_timestamp: this.tick() });
      return { status: 200, body: llm };
    }
    if (key === 'POST create-agent') {
      const engine = body.response_engine;
      if (!engine || (engine.type === 'retell-llm' && !this.llms.has(engine.llm_id))) {
        return { status: 400, body: { status: 'error', message: 'response_engine names no Retell LLM of this account.' } };
      }
      const agent: FakeAgentVersion = {
        ...body,
        agent_id: `agent_${randomBytes(12).toString('hex')}`,
        version: 0,
        is_published: false,
        last_modification_timestamp: this.tick(),
      };
      this.agents.set(agent.agent_id, [agent]);
      return { status: 201, body: agent };
    }
    if (key === 'POST v2/list-agents') {
      const q = String(body.filter_criteria?.query ?? '').toLowerCase();
      const items = [...this.agents.values()]
        .map((versions) => versions.at(-1)!)
        .filter(
          (a) =>
            !q ||
            String(a.agent_name ?? '')
              .toLowerCase()
              .includes(q) ||
            a.agent_id.includes(q),
        )
        .map((a) => ({ agent_id: a.agent_id, agent_name: a.agent_name ?? '', channel: 'voice' }));
      return { status: 200, body: { items, has_more: false } };
    }
    const versions = id === undefined ? undefined : this.agents.get(id);
    if (key === 'GET get-agent') {
      if (!versions) return notFound;
      const wanted = query.get('version');
      const found = wanted === null ? versions.at(-1) : versions.find((v) => v.version === Number(wanted));
      return found ? { status: 200, body: found } : notFound;
    }
    if (key === 'PATCH update-agent') {
      if (!versions) return notFound;
      Object.assign(versions.at(-1)!, body, { last_modification_timestamp: this.tick() });
      return { status: 200, body: versions.at(-1) };
    }
    if (key === 'POST publish-agent-version') {
      if (!versions) return notFound;
      const draft = versions.at(-1)!;
      if (body.version !== draft.version || draft.is_published) {
        return { status: 400, body: { status: 'error', message: `Version ${body.version} is not the agent's draft.` } };
      }
      draft.is_published = true;
      versions.push({ ...draft, version: draft.version + 1, is_published: false, last_modification_timestamp: this.tick() });
      return { status: 200, body: undefined };
    }
    if (key === 'DELETE delete-agent') {
      if (!versions) return notFound;
      this.agents.delete(id!);
      return { status: 204, body: undefined };
    }
    if (key === 'PATCH update-phone-number') {
      if (!this.knownNumber(id!)) return notFound;
      const number = this.phoneNumbers.get(id!) ?? { phone_number: id!, outbound_agents: null };
      number.outbound_agents = body.outbound_agents ?? null;
      this.phoneNumbers.set(id!, number);
      return { status: 200, body: number };
    }
    return notFound;
  }

  private createPhoneCall(res: ServerResponse, body: Record<string, any>, authorization: string | undefined): void {
    const to = String(body.to_number ?? '');
    if (!/^\+[1-9]\d{6,14}$/.test(String(body.from_number ?? '')) || !/^\+[1-9]\d{6,14}$/.test(to)) {
      this.requests.push({ to, status: 400 });
      return reply(res, 400, { status: 'error', message: 'Invalid request format, please check API reference.' });
    }
    let script = this.options.script(to);
    if (script.kind === 'rate_limited_once') {
      if (!this.refusedOnce.has(to)) {
        this.refusedOnce.add(to);
        this.requests.push({ to, status: 429 });
        return reply(
          res,
          429,
          { status: 'error', message: 'Account rate limited, please throttle your requests.' },
          { 'retry-after': '1' },
        );
      }
      script = script.then;
    }
    if (script.kind === 'invalid_number') {
      this.requests.push({ to, status: 400 });
      return reply(res, 400, { status: 'error', message: `Invalid to_number: ${to} is not a valid phone number.` });
    }
    const call: CreatedCall = {
      callId: `call_${randomBytes(14).toString('hex')}`,
      body,
      authorization,
      createdAt: this.now(),
    };
    this.calls.push(call);
    this.requests.push({ to, status: 201 });
    reply(res, 201, this.callObject(call, 'registered'));
    if (script.kind === 'silent') return;
    this.keepPlaying(this.play(call, script));
  }

  /** Sends the call's webhooks one after another, as Retell does. */
  private async play(call: CreatedCall, script: Extract<Outcome, { kind: 'connected' | 'not_connected' }>): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    if (script.kind === 'not_connected') {
      await this.send('call_ended', this.callObject(call, 'call_ended', script));
      return;
    }
    await this.send('call_started', this.callObject(call, 'call_started', script));
    await this.send('call_ended', this.callObject(call, 'call_ended', script));
    await this.send('call_analyzed', this.callObject(call, 'call_analyzed', script));
  }

  /** The call object as Retell shows it at `stage`. */
  callObject(
    call: CreatedCall,
    stage: 'registered' | 'call_started' | 'call_ended' | 'call_analyzed',
    script?: Script,
  ): Record<string, unknown> {
    const base = {
      call_type: 'phone_call',
      direction: 'outbound',
      call_id: call.callId,
      agent_id: call.body.override_agent_id ?? 'agent_fake_bound_to_number',
      agent_version: 1,
      from_number: call.body.from_number,
      to_number: call.body.to_number,
      metadata: call.body.metadata ?? {},
      retell_llm_dynamic_variables: call.body.retell_llm_dynamic_variables ?? {},
      data_storage_setting: 'everything',
    };
    if (stage === 'registered') return { ...base, call_status: 'registered' };
    const start = call.createdAt + 3_000;
    if (script?.kind === 'not_connected') {
      return {
        ...base,
        call_status: 'not_connected',
        disconnection_reason: script.reason,
        start_timestamp: call.createdAt,
        end_timestamp: call.createdAt + 25_000,
        duration_ms: 0,
      };
    }
    if (script?.kind !== 'connected') throw new Error('only connected and not_connected calls have events');
    if (stage === 'call_started') return { ...base, call_status: 'ongoing', start_timestamp: start };
    const ended = {
      ...base,
      call_status: 'ended',
      start_timestamp: start,
      end_timestamp: start + script.durationMs,
      duration_ms: script.durationMs,
      disconnection_reason: script.reason,
      transcript: 'Agent: Hi, this is Sam from Acme Dental.\nUser: Hello.\n',
      transcript_object: [
        { role: 'agent', content: 'Hi, this is Sam from Acme Dental.', words: [{ word: 'Hi', start: 0.1, end: 0.3 }] },
        { role: 'user', content: 'Hello.', words: [{ word: 'Hello', start: 2.1, end: 2.5 }] },
      ],
      recording_url: `https://dxc03zgurdly9.cloudfront.net/${call.callId}/recording.wav`,
      public_log_url: `https://dxc03zgurdly9.cloudfront.net/${call.callId}/public.log`,
      call_cost: { combined_cost: 7, total_duration_seconds: Math.round(script.durationMs / 1000), product_costs: [] },
    };
    return stage === 'call_ended' ? ended : { ...ended, call_analysis: script.analysis };
  }

  /**
   * POSTs one webhook to the app, signed with the webhook key (or as told: another key, another
   * timestamp, a header of the test's own, or none, or the body changed after signing).
   */
  async send(event: string, call: Record<string, unknown>, options: SignOptions = {}): Promise<Delivery> {
    if (!this.webhookUrl) throw new Error('no webhook URL');
    const { status, body } = await this.post(this.webhookUrl, JSON.stringify({ event, call }), options);
    const delivery = { callId: String(call.call_id), event, status, body };
    this.deliveries.push(delivery);
    return delivery;
  }

  /**
   * The agent calls one of its custom functions while the call is under way: Retell POSTs the function's
   * name, the call object as it stands and the LLM's arguments to the function's URL, signed as webhooks are.
   */
  async callTool(
    call: CreatedCall,
    name: string,
    args: Record<string, unknown>,
    options: SignOptions & { callObject?: Record<string, unknown> } = {},
  ): Promise<{ status: number; body: any }> {
    if (!this.toolsUrl) throw new Error('no tools URL');
    const callObject = options.callObject ?? {
      ...this.callObject(call, 'registered'),
      call_status: 'ongoing',
      start_timestamp: call.createdAt + 3_000,
    };
    return this.post(`${this.toolsUrl}/${name}`, JSON.stringify({ name, call: callObject, args }), options);
  }

  private async post(url: string, body: string, options: SignOptions): Promise<{ status: number; body: any }> {
    const timestamp = options.timestampMs ?? this.now();
    const signature =
      options.signature === undefined
        ? `v=${timestamp},d=${createHmac('sha256', options.key ?? this.options.webhookKey)
            .update(body + timestamp)
            .digest('hex')}`
        : options.signature;
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(signature === null ? {} : { 'x-retell-signature': signature }) },
      body: options.tamper ? options.tamper(body) : body,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }
}
