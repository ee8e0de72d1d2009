import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LocalFake, reply } from './local-fake.js';

// A local stand-in for Twilio's Voice API, speaking its protocol: POST
// /2010-04-01/Accounts/{AccountSid}/Calls.json with HTTP Basic auth (AccountSid:AuthToken) and a form
// body answers 201 with a call resource, and the call is then played: status callbacks (initiated,
// ringing, in-progress, then the final status) are POSTed to the StatusCallback URL, and once answered
// the voice Url is POSTed with the machine detection's AnsweredBy and its TwiML read to decide what
// happens next. Every request is signed as Twilio signs it: X-Twilio-Signature is base64 of HMAC-SHA1,
// keyed with the auth token, over the URL as given followed by each POST parameter's name and value,
// sorted by name. Written from Twilio's documentation, independently of the code under test.

/** What answers a call and how it goes, chosen by the test per To number. */
export type Scenario =
  /** A person answers (AnsweredBy human, or `unknown` when said) and talks for `talkSeconds` once connected. */
  | { kind: 'human'; talkSeconds: number; answeredBy?: 'human' | 'unknown' }
  /** A machine answers; the detection takes `detectionSeconds` (the greeting, up to the beep for machine_end_*). */
  | {
      kind: 'machine';
      answeredBy: 'machine_end_beep' | 'machine_end_silence' | 'machine_end_other' | 'machine_start' | 'fax';
      detectionSeconds: number;
    }
  | { kind: 'busy' }
  | { kind: 'no_answer' }
  | { kind: 'failed'; sipResponseCode?: number; errorCode?: number }
  /** Calls.json answers 429 with Twilio's error 20429 (and Retry-After) once for this number, then plays `then`. */
  | { kind: 'rate_limited_once'; then: Scenario }
  /** Calls.json answers 400 with this error code (21211: invalid 'To' number; 21214: not reachable, ...). */
  | { kind: 'refused'; code: number; message: string }
  /** The call is created and nothing more is sent: the test sends its callbacks itself. */
  | { kind: 'silent' };

/** A create-call request as Twilio received it. */
export interface CreatedCall {
  sid: string;
  /** Every form parameter, a repeated one as a list. */
  params: Record<string, string | string[]>;
  authorization: string | undefined;
}

/** The TwiML the voice Url answered, as this fake read it. */
export interface Twiml {
  sid: string;
  to: string;
  answeredBy: string;
  status: number;
  contentType: string | null;
  text: string;
  /** What the TwiML asks for, or the reason it could not be read. */
  verbs: { connect?: { url: string; parameters: Record<string, string> }; say?: string; hangup: boolean } | { error: string };
}

export interface Delivery {
  sid: string;
  url: string;
  params: Record<string, string>;
  status: number;
  body: any;
}

export interface FakeTwilioOptions {
  accountSid: string;
  authToken: string;
  scenario: (to: string) => Scenario;
}

/** Seconds a `<Say>` of `text` takes, for this fake: 15 characters a second, a started second counting. */
export const sayingSeconds = (text: string) => Math.ceil(text.length / 15);

const EVENTS = new Set(['initiated', 'ringing', 'answered', 'completed']);

export class FakeTwilio extends LocalFake {
  readonly calls: CreatedCall[] = [];
  readonly requests: { to: string; status: number; code?: number }[] = [];
  readonly twiml: Twiml[] = [];
  readonly deliveries: Delivery[] = [];
  /**
   * Where requests to our public URL really go: Twilio posts to PUBLIC_BASE_URL, which a proxy or tunnel
   * forwards to the app. Requests are signed over the public URL and sent to the forwarded one.
   */
  forward: { from: string; to: string } | undefined;
  private readonly refusedOnce = new Set<string>();
  private sequence = new Map<string, number>();

  constructor(private readonly options: FakeTwilioOptions) {
    super();
  }

  protected failure(error: unknown): unknown {
    return twilioError(500, 20500, String(error));
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Calls\.json$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !match) return reply(res, 404, twilioError(404, 20404, 'The requested resource was not found'));
    const [user, password] = basicCredentials(req.headers.authorization);
    if (user !== this.options.accountSid || password !== this.options.authToken || match[1] !== user) {
      return reply(res, 401, twilioError(401, 20003, 'Authenticate'));
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return reply(res, 400, twilioError(400, 20001, 'Content-Type must be application/x-www-form-urlencoded'));
    }
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const params: Record<string, string | string[]> = {};
    for (const name of new Set(form.keys())) {
      const values = form.getAll(name);
      params[name] = values.length === 1 ? values[0]! : values;
    }
    const to = form.get('To') ?? '';
    const refuse = (status: number, code: number, message: string, headers: Record<string, string> = {}) => {
      this.requests.push({ to, status, code });
      reply(res, status, twilioError(status, code, message), headers);
    };
    if (!form.get('To')) return refuse(400, 21201, "No 'To' number is specified");
    if (!/^\+[1-9]\d{6,14}$/.test(form.get('From') ?? '')) return refuse(400, 21212, "Invalid 'From' Phone Number");
    for (const name of ['Url', 'StatusCallback']) {
      if (!/^https?:\/\/[^\s]+$/.test(form.get(name) ?? '')) return refuse(400, 21205, `${name} is not a valid URL`);
    }
    if (![...form.getAll('StatusCallbackEvent')].every((e) => EVENTS.has(e))) return refuse(400, 21626, 'Invalid StatusCallbackEvent');
    if (!['Enable', 'DetectMessageEnd', null].includes(form.get('MachineDetection'))) {
      return refuse(400, 21626, 'Invalid MachineDetection');
    }
    if (!/^\+[1-9]\d{6,14}$/.test(to)) return refuse(400, 21211, `Invalid 'To' Phone Number: ${to}`);

    let scenario = this.options.scenario(to);
    if (scenario.kind === 'rate_limited_once') {
      if (!this.refusedOnce.has(to)) {
        this.refusedOnce.add(to);
        return refuse(429, 20429, 'Too Many Requests', { 'retry-after': '1' });
      }
      scenario = scenario.then;
    }
    if (scenario.kind === 'refused') return refuse(400, scenario.code, scenario.message);

    const call: CreatedCall = { sid: `CA${randomBytes(16).toString('hex')}`, params, authorization: req.headers.authorization };
    this.calls.push(call);
    this.requests.push({ to, status: 201 });
    reply(res, 201, this.resource(call, 'queued'));
    if (scenario.kind === 'silent') return;
    this.keepPlaying(this.play(call, scenario));
  }

  /** Plays the call as Twilio would, each request after the previous one was answered. */
  private async play(call: CreatedCall, scenario: Scenario): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    const status = (callStatus: string, extra: Record<string, string> = {}) => this.status(call, callStatus, extra);
    await status('initiated');
    switch (scenario.kind) {
      case 'busy':
        await status('busy', { CallDuration: '0', SipResponseCode: '486' });
        return;
      case 'no_answer':
        await status('ringing');
        await status('no-answer', { CallDuration: '0', SipResponseCode: '487' });
        return;
      case 'failed':
        await status('failed', {
          CallDuration: '0',
          ...(scenario.sipResponseCode ? { SipResponseCode: String(scenario.sipResponseCode) } : {}),
          ...(scenario.errorCode ? { ErrorCode: String(scenario.errorCode) } : {}),
        });
        return;
      case 'human':
      case 'machine': {
        await status('ringing');
        const answeredBy = scenario.kind === 'human' ? (scenario.answeredBy ?? 'human') : scenario.answeredBy;
        await status('in-progress');
        const detection = scenario.kind === 'human' ? 2 : scenario.detectionSeconds;
        const twiml = await this.voice(call, answeredBy, detection);
        // What the TwiML made of the call: the conversation, the message said, or nothing before hanging up.
        let seconds = detection;
        if (!('error' in twiml.verbs)) {
          if (twiml.verbs.connect && scenario.kind === 'human') seconds += scenario.talkSeconds;
          if (twiml.verbs.say) seconds += sayingSeconds(twiml.verbs.say);
        }
        await status('completed', { CallDuration: String(seconds), SipResponseCode: '200', AnsweredBy: answeredBy });
        return;
      }
      default:
        throw new Error(`no play for ${scenario.kind}`);
    }
  }

  /** The call resource, as Calls.json answers with it. */
  resource(call: CreatedCall, status: string): Record<string, unknown> {
    const sid = this.options.accountSid;
    return {
      sid: call.sid,
      account_sid: sid,
      to: call.params.To,
      to_formatted: call.params.To,
      from: call.params.From,
      from_formatted: call.params.From,
      status,
      direction: 'outbound-api',
      api_version: '2010-04-01',
      date_created: new Date().toUTCString().replace('GMT', '+0000'),
      answered_by: null,
      duration: null,
      price: null,
      uri: `/2010-04-01/Accounts/${sid}/Calls/${call.sid}.json`,
    };
  }

  /** The parameters every request about the call carries. */
  private common(call: CreatedCall, callStatus: string): Record<string, string> {
    return {
      AccountSid: this.options.accountSid,
      ApiVersion: '2010-04-01',
      CallSid: call.sid,
      CallStatus: callStatus,
      Called: String(call.params.To),
      Caller: String(call.params.From),
      Direction: 'outbound-api',
      From: String(call.params.From),
      To: String(call.params.To),
    };
  }

  /** POSTs a status callback, when the call asked for that event (`completed` covers every final status). */
  async status(call: CreatedCall, callStatus: string, extra: Record<string, string> = {}): Promise<Delivery | null> {
    const event = callStatus === 'in-progress' ? 'answered' : ['initiated', 'ringing'].includes(callStatus) ? callStatus : 'completed';
    const events = ([] as string[]).concat(call.params.StatusCallbackEvent ?? []);
    if (!events.includes(event)) return null;
    const sequence = this.sequence.get(call.sid) ?? 0;
    this.sequence.set(call.sid, sequence + 1);
    const params = {
      ...this.common(call, callStatus),
      CallbackSource: 'call-progress-events',
      SequenceNumber: String(sequence),
      Timestamp: new Date().toUTCString().replace('GMT', '+0000'),
      ...extra,
    };
    return this.send(String(call.params.StatusCallback), params, { sid: call.sid });
  }

  /** POSTs the voice Url with the detection's verdict, and reads the TwiML it answers. */
  private async voice(call: CreatedCall, answeredBy: string, detectionSeconds: number): Promise<Twiml> {
    const params = {
      ...this.common(call, 'in-progress'),
      AnsweredBy: answeredBy,
      MachineDetectionDuration: String(detectionSeconds * 1000),
    };
    const { status, contentType, text } = await this.post(String(call.params.Url), params);
    const twiml: Twiml = { sid: call.sid, to: String(call.params.To), answeredBy, status, contentType, text, verbs: readTwiml(text) };
    if (status !== 200) twiml.verbs = { error: `voice Url answered ${status}` };
    this.twiml.push(twiml);
    return twiml;
  }

  /**
   * POSTs a signed request to one of our URLs and records the delivery (signed with the auth token, or
   * as told: another token, a header of the test's own, or none, or the parameters changed after signing).
   */
  async send(
    url: string,
    params: Record<string, string>,
    options: {
      sid?: string;
      token?: string;
      signature?: string | null;
      tamper?: (params: Record<string, string>) => Record<string, string>;
    } = {},
  ): Promise<Delivery> {
    const { status, text } = await this.post(url, params, options);
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const delivery = { sid: options.sid ?? params.CallSid ?? '', url, params, status, body };
    this.deliveries.push(delivery);
    return delivery;
  }

  private async post(
    url: string,
    params: Record<string, string>,
    options: { token?: string; signature?: string | null; tamper?: (params: Record<string, string>) => Record<string, string> } = {},
  ): Promise<{ status: number; contentType: string | null; text: string }> {
    const signature =
      options.signature === undefined ? signatureOf(options.token ?? this.options.authToken, url, params) : options.signature;
    const sent = options.tamper ? options.tamper(params) : params;
    const target = this.forward && url.startsWith(this.forward.from) ? this.forward.to + url.slice(this.forward.from.length) : url;
    const response = await fetch(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'user-agent': 'TwilioProxy/1.1',
        ...(signature === null ? {} : { 'x-twilio-signature': signature }),
      },
      body: new URLSearchParams(sent).toString(),
    });
    return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
  }
}

/** Twilio's signature, as its documentation gives the algorithm. */
export function signatureOf(authToken: string, url: string, params: Record<string, string>): string {
  let data = url;
  for (const name of Object.keys(params).sort()) data += name + params[name];
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf-8')).digest('base64');
}

function basicCredentials(header: string | undefined): [string, string] | [] {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? '');
  if (!match) return [];
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? [] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

/** Twilio's error body. */
function twilioError(status: number, code: number, message: string) {
  return { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status };
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

const unescapeXml = (text: string) => text.replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => ENTITIES[name]!);

/**
 * The verbs of a TwiML document, checked as Twilio's parser would refuse it: one <Response> root,
 * balanced tags, no bare `<` or `&` in text or attribute values, only the verbs this fake knows.
 */
export function readTwiml(text: string): Twiml['verbs'] {
  const body = text.replace(/^<\?xml version="1\.0" encoding="UTF-8"\?>/, '');
  const tokens = body.match(/<[^<>]*>|[^<>]+/g) ?? [];
  if (tokens.join('') !== body) return { error: 'not well-formed' };
  const open: string[] = [];
  const verbs: { connect?: { url: string; parameters: Record<string, string> }; say?: string; hangup: boolean } = { hangup: false };
  for (const token of tokens) {
    if (!token.startsWith('<')) {
      if (/&(?!(amp|lt|gt|quot|apos);)/.test(token)) return { error: 'bare & in text' };
      if (open.at(-1) === 'Say') verbs.say = (verbs.say ?? '') + unescapeXml(token);
      else if (token.trim()) return { error: `text outside <Say>: ${token}` };
      continue;
    }
    const tag = /^<(\/?)([A-Za-z]+)((?:\s+[A-Za-z_]+="[^"<]*")*)\s*(\/?)>$/.exec(token);
    if (!tag) return { error: `malformed tag ${token}` };
    const [, closing, name, attributeText, selfClosing] = tag as unknown as [string, string, string, string, string];
    if (closing) {
      if (open.pop() !== name) return { error: `unbalanced </${name}>` };
      continue;
    }
    const attributes: Record<string, string> = {};
    for (const [, key, value] of attributeText.matchAll(/([A-Za-z_]+)="([^"]*)"/g)) {
      if (/&(?!(amp|lt|gt|quot|apos);)/.test(value!)) return { error: 'bare & in an attribute' };
      attributes[key!] = unescapeXml(value!);
    }
    const parent = open.at(-1);
    if (open.length === 0 && name !== 'Response') return { error: `root <${name}>` };
    if (name === 'Connect' && parent !== 'Response') return { error: '<Connect> outside <Response>' };
    if (name === 'Stream') {
      if (parent !== 'Connect' || !attributes.url) return { error: '<Stream> needs <Connect> and a url' };
      verbs.connect = { url: attributes.url, parameters: {} };
    }
    if (name === 'Parameter') {
      if (parent !== 'Stream' || !verbs.connect || attributes.name === undefined) return { error: '<Parameter> outside <Stream>' };
      verbs.connect.parameters[attributes.name] = attributes.value ?? '';
    }
    if (name === 'Hangup') verbs.hangup = true;
    if (!['Response', 'Connect', 'Stream', 'Parameter', 'Say', 'Hangup'].includes(name)) return { error: `unknown verb <${name}>` };
    if (!selfClosing) open.push(name);
  }
  if (open.length) return { error: `unclosed <${open.join('>, <')}>` };
  return verbs;
}
