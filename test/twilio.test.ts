import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startDialer, type DialerRuntime } from '../src/jobs/dialer.js';
import { systemClock } from '../src/services/context.js';
import type { DialerControl } from '../src/services/dialer/control.js';
import { CallRefused, type PlaceCall } from '../src/services/voice/providers/telephony.js';
import { TwilioTelephony } from '../src/services/voice/providers/twilio/telephony.js';
import { callResultOf, twilioCall } from '../src/services/voice/providers/twilio/calls.js';
import { twilioSignature, verifyTwilioSignature } from '../src/services/voice/providers/twilio/signature.js';
import { twimlFor } from '../src/services/voice/providers/twilio/twiml.js';
import { runtimeToken, type RuntimeGrant } from '../src/services/voice/runtime/token.js';
import { AI_DISCLOSURE_SENTENCE } from '../src/services/calling-rules/disclosure.js';
import { IN_CALL_TOOLS } from '../src/services/voice/tools/definitions.js';
import { configProblems } from './support/config.js';
import { startTestApp, type TestApp } from './support/app.js';
import { campaignCompleted, dialerEnv, ledgerMatchesAccount, runningCampaign } from './support/dialer.js';
import { FakeTwilio, readTwiml, sayingSeconds, signatureOf, type CreatedCall, type Scenario } from './support/fake-twilio.js';
import { waitFor } from './support/wait.js';

// The Twilio adapter: the signature and the mapping alone, then campaigns dialed through the real app
// and dialer on a local fake of Twilio's API, which plays each call (status callbacks, the voice URL
// and its TwiML) as Twilio does, signing every request. Every outcome is fixed by the number dialed.

const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const AUTH_TOKEN = '0123456789abcdef0123456789abcdef';
const PUBLIC_BASE_URL = 'https://calls.example.test';
const STREAM_URL = 'wss://agents.example.test/twilio';
const ATTEMPT = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const SID = 'CA0123456789abcdef0123456789abcdef';
const AGENT = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c';

describe('the Twilio signature', () => {
  // Twilio's documented example: auth token 12345, this URL and these parameters.
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  const params: [string, string][] = [
    ['Digits', '1234'],
    ['To', '+18005551212'],
    ['From', '+12349013030'],
    ['Caller', '+12349013030'],
    ['CallSid', 'CA1234567890ABCDE'],
  ];

  it('is base64 HMAC-SHA1 of the URL followed by each parameter name and value, sorted by name', () => {
    const data =
      'https://mycompany.com/myapp.php?foo=1&bar=2CallSidCA1234567890ABCDECaller+12349013030Digits1234From+12349013030To+18005551212';
    const independent = createHmac('sha1', '12345').update(data).digest('base64');
    expect(independent).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
    expect(twilioSignature('12345', url, params)).toBe(independent);
  });

  it('sorts names in byte order (upper case first) and signs decoded values as they are', () => {
    const signed = twilioSignature('12345', 'https://x.test/a?b=c', [
      ['b', 'é'],
      ['B', '1 2'],
      ['a', ''],
    ]);
    expect(signed).toBe(createHmac('sha1', '12345').update('https://x.test/a?b=cB1 2abé').digest('base64'));
  });

  it('accepts the right signature and refuses a missing, malformed or wrong one', () => {
    const good = twilioSignature(AUTH_TOKEN, url, params);
    expect(() => verifyTwilioSignature(AUTH_TOKEN, url, params, good)).not.toThrow();
    const refused = (signature: string | undefined, at = url, with_ = params) => {
      try {
        verifyTwilioSignature(AUTH_TOKEN, at, with_, signature);
      } catch (error) {
        return (error as { fieldErrors: Record<string, string[]> }).fieldErrors;
      }
      return null;
    };
    expect(refused(undefined)).toEqual({ 'x-twilio-signature': ['Missing or malformed signature.'] });
    expect(refused('not base64 at all')).toEqual({ 'x-twilio-signature': ['Missing or malformed signature.'] });
    expect(refused(twilioSignature('another-token', url, params))).toEqual({
      'x-twilio-signature': ['Signature does not match the URL and parameters.'],
    });
    expect(refused(good, `${url}&baz=3`)).not.toBeNull();
    expect(refused(good, url, [...params, ['Extra', '1']])).not.toBeNull();
  });
});

describe('Twilio statuses as our results', () => {
  const result = (fields: Record<string, string>, leaveVoicemail = false) =>
    callResultOf(ATTEMPT, twilioCall.parse({ CallSid: SID, ...fields }), leaveVoicemail);

  it.each([
    ['completed', { AnsweredBy: 'human' }, 'human', 'completed'],
    ['completed', { AnsweredBy: 'unknown' }, 'human', 'completed'],
    ['completed', {}, 'human', 'completed'],
    ['completed', { AnsweredBy: 'machine_end_beep' }, 'voicemail', 'machine_end_beep'],
    ['completed', { AnsweredBy: 'machine_end_silence' }, 'voicemail', 'machine_end_silence'],
    ['completed', { AnsweredBy: 'machine_end_other' }, 'voicemail', 'machine_end_other'],
    ['completed', { AnsweredBy: 'machine_start' }, 'voicemail', 'machine_start'],
    ['completed', { AnsweredBy: 'fax' }, 'failed', 'fax'],
    ['busy', {}, 'busy', 'busy'],
    ['no-answer', {}, 'no_answer', 'no_answer'],
    ['canceled', {}, 'failed', 'canceled'],
    ['failed', {}, 'failed', 'failed'],
    ['failed', { SipResponseCode: '503' }, 'failed', 'sip_503'],
    ['failed', { SipResponseCode: '404' }, 'invalid_number', 'sip_404'],
    ['failed', { SipResponseCode: '410' }, 'invalid_number', 'sip_410'],
    ['failed', { SipResponseCode: '484' }, 'invalid_number', 'sip_484'],
    ['failed', { SipResponseCode: '604' }, 'invalid_number', 'sip_604'],
    ['failed', { ErrorCode: '13224' }, 'invalid_number', 'error_13224'],
    ['failed', { ErrorCode: '13223' }, 'invalid_number', 'error_13223'],
    ['failed', { ErrorCode: '21211' }, 'invalid_number', 'error_21211'],
    ['failed', { ErrorCode: '31005' }, 'failed', 'error_31005'],
  ])('maps CallStatus %s with %j to %s (reason %s)', (status, extra, outcome, reason) => {
    expect(result({ CallStatus: status, CallDuration: '0', ...extra })).toMatchObject({ outcome, disconnectReason: reason });
  });

  it('counts the seconds of a completed call only; ringing is never billed', () => {
    expect(result({ CallStatus: 'completed', CallDuration: '95', AnsweredBy: 'human' }).durationSeconds).toBe(95);
    expect(result({ CallStatus: 'no-answer', CallDuration: '25' }).durationSeconds).toBe(0);
    expect(result({ CallStatus: 'busy' }).durationSeconds).toBe(0);
    expect(result({ CallStatus: 'completed' }).durationSeconds).toBe(0);
  });

  it('left a message only on a machine heard to the end of its greeting, when the call had one to leave', () => {
    const voicemail = (answeredBy: string, leave: boolean) =>
      result({ CallStatus: 'completed', CallDuration: '30', AnsweredBy: answeredBy }, leave).messageLeft;
    expect(voicemail('machine_end_beep', true)).toBe(true);
    expect(voicemail('machine_end_silence', true)).toBe(true);
    expect(voicemail('machine_end_other', true)).toBe(true);
    expect(voicemail('machine_end_beep', false)).toBe(false);
    expect(voicemail('machine_start', true)).toBe(false);
    expect(result({ CallStatus: 'completed', CallDuration: '30', AnsweredBy: 'human' }, true).messageLeft).toBeUndefined();
  });
});

describe('the TwiML of the voice URL', () => {
  const call = { attempt_id: ATTEMPT, voicemail_message: 'Hi Ann & "Bob", <call> us back.' };
  const grant = { token: 'payload.sig&"', agentId: AGENT, agentVersion: 3, expiresAt: new Date() };

  it("connects a person (or an answer the detection could not tell) to the call's agent, with our attempt id, its version and token", () => {
    for (const answeredBy of ['human', 'unknown', undefined]) {
      const twiml = twimlFor(answeredBy, call, STREAM_URL, grant);
      expect(readTwiml(twiml)).toEqual({
        connect: {
          url: STREAM_URL,
          parameters: {
            attempt_id: ATTEMPT,
            agent_id: AGENT,
            agent_version: '3',
            token: grant.token,
            answered_by: answeredBy ?? 'unknown',
          },
        },
        hangup: false,
      });
    }
  });

  it('hangs up on a person when there is no call in flight to connect them to (no grant)', () => {
    expect(readTwiml(twimlFor('human', call, STREAM_URL))).toEqual({ hangup: true });
  });

  it('says the message, escaped, after a voicemail greeting ended, and hangs up; hangs up on anything else', () => {
    const said = twimlFor('machine_end_beep', call, STREAM_URL);
    expect(said).toContain('<Say>Hi Ann &amp; &quot;Bob&quot;, &lt;call&gt; us back.</Say><Hangup/>');
    expect(readTwiml(said)).toEqual({ say: call.voicemail_message, hangup: true });
    const hangUp = { hangup: true };
    expect(readTwiml(twimlFor('machine_end_silence', { attempt_id: ATTEMPT }, STREAM_URL))).toEqual(hangUp);
    for (const answeredBy of ['machine_start', 'fax']) expect(readTwiml(twimlFor(answeredBy, call, STREAM_URL))).toEqual(hangUp);
    // Characters XML cannot carry at all would make Twilio's parser refuse the whole answer.
    expect(readTwiml(twimlFor('machine_end_other', { ...call, voicemail_message: 'a\u0001b' }, STREAM_URL))).toEqual({
      say: 'ab',
      hangup: true,
    });
  });
});

describe('Twilio configuration', () => {
  const twilio = {
    TELEPHONY_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    PUBLIC_BASE_URL: `${PUBLIC_BASE_URL}/`,
    TWILIO_AGENT_STREAM_URL: STREAM_URL,
  };

  it('dials through Twilio with its account, our public URL and the agent stream, with a one-hour lease', () => {
    const config = loadConfig(twilio);
    expect(config.dialer.telephony).toEqual({
      provider: 'twilio',
      baseUrl: 'https://api.twilio.com',
      accountSid: ACCOUNT_SID,
      authToken: AUTH_TOKEN,
      publicBaseUrl: PUBLIC_BASE_URL,
      timeoutSeconds: 10,
    });
    expect(config.twilioWebhook).toEqual({ authToken: AUTH_TOKEN, publicBaseUrl: PUBLIC_BASE_URL, agentStreamUrl: STREAM_URL });
    expect(config.dialer.dialer.leaseSeconds).toBe(3_900);
    expect(loadConfig({}).twilioWebhook).toBeUndefined();
  });

  it('names every missing or malformed setting, never echoing the auth token', () => {
    expect(configProblems({ TELEPHONY_PROVIDER: 'twilio' })).toEqual([
      'TWILIO_ACCOUNT_SID is required with TELEPHONY_PROVIDER=twilio',
      'TWILIO_AUTH_TOKEN is required with TELEPHONY_PROVIDER=twilio',
      'PUBLIC_BASE_URL is required with TELEPHONY_PROVIDER=twilio',
      'TWILIO_AGENT_STREAM_URL is required with TELEPHONY_PROVIDER=twilio',
    ]);
    expect(
      configProblems({
        ...twilio,
        TWILIO_ACCOUNT_SID: 'SK0123',
        TWILIO_AUTH_TOKEN: 'not-a-token',
        TWILIO_API_BASE_URL: 'ftp://x',
        PUBLIC_BASE_URL: 'https://calls.example.test/?a=1',
        TWILIO_AGENT_STREAM_URL: 'https://agents.example.test',
        TWILIO_TIMEOUT_SECONDS: '0',
      }),
    ).toEqual([
      'TWILIO_ACCOUNT_SID must be a Twilio account SID (AC followed by 32 hex digits) (got "SK0123")',
      "TWILIO_AUTH_TOKEN must be the Twilio account's auth token (32 hex digits)",
      'TWILIO_API_BASE_URL must be an http(s) URL (got "ftp://x")',
      'PUBLIC_BASE_URL must be the http(s) URL this service is reached at, like https://calls.example.com (no query) (got "https://calls.example.test/?a=1")',
      'TWILIO_AGENT_STREAM_URL must be a wss:// URL (the voice agent runtime) (got "https://agents.example.test")',
      'TWILIO_TIMEOUT_SECONDS must be at least 1 (got "0")',
    ]);
    const production = { ...twilio, NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) };
    expect(
      configProblems({ ...production, TWILIO_API_BASE_URL: 'http://twilio.internal', PUBLIC_BASE_URL: 'http://calls.internal' }),
    ).toEqual([
      'TWILIO_API_BASE_URL must be an https URL in production (it carries the auth token) (got "http://twilio.internal")',
      'PUBLIC_BASE_URL must be an https URL in production (Twilio posts call details to it) (got "http://calls.internal")',
    ]);
  });
});

describe('creating a call', () => {
  let api: FakeTwilio;
  const refusals: Record<string, Scenario> = {
    '+14155550101': { kind: 'rate_limited_once', then: { kind: 'silent' } },
    '+14155550102': { kind: 'refused', code: 21211, message: "Invalid 'To' Phone Number" },
    '+14155550103': { kind: 'refused', code: 21214, message: "'To' phone number cannot be reached" },
    '+14155550104': { kind: 'refused', code: 21217, message: 'Phone number does not appear to be valid' },
    '+14155550105': { kind: 'refused', code: 21215, message: 'Geo Permission configuration is not permitting call' },
  };
  const placeCall = (to: string): PlaceCall => ({
    attemptId: ATTEMPT,
    attemptNumber: 1,
    from: '+14155550100',
    to,
    providerAgentId: null,
    providerAgentVersion: null,
    variables: {},
    voicemailMessage: null,
  });
  // None of these calls is about the timeout: a generous one keeps a busy machine from failing them.
  const telephony = (authToken = AUTH_TOKEN) =>
    new TwilioTelephony({ baseUrl: api.url, accountSid: ACCOUNT_SID, authToken, publicBaseUrl: PUBLIC_BASE_URL, timeoutSeconds: 25 });

  beforeAll(async () => {
    api = await new FakeTwilio({
      accountSid: ACCOUNT_SID,
      authToken: AUTH_TOKEN,
      scenario: (to) => refusals[to] ?? { kind: 'silent' },
    }).start();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('posts the documented form with Basic auth and answers the call SID', async () => {
    const { providerCallId } = await telephony().placeCall({ ...placeCall('+14155550199'), voicemailMessage: 'Call us back.' });
    const created = api.calls.at(-1)!;
    expect(providerCallId).toBe(created.sid);
    expect(providerCallId).toMatch(/^CA[0-9a-f]{32}$/);
    expect(created.authorization).toBe(`Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`);
    expect(created.params).toMatchObject({
      To: '+14155550199',
      From: '+14155550100',
      StatusCallbackMethod: 'POST',
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      MachineDetection: 'DetectMessageEnd',
      TimeLimit: '3600',
    });
    const voice = new URL(String(created.params.Url));
    expect(`${voice.origin}${voice.pathname}`).toBe(`${PUBLIC_BASE_URL}/webhooks/twilio/voice`);
    expect(Object.fromEntries(voice.searchParams)).toEqual({ attempt_id: ATTEMPT, voicemail_message: 'Call us back.' });
    const status = new URL(String(created.params.StatusCallback));
    expect(`${status.origin}${status.pathname}`).toBe(`${PUBLIC_BASE_URL}/webhooks/twilio/status`);
    expect(Object.fromEntries(status.searchParams)).toEqual({ attempt_id: ATTEMPT, leave_voicemail: 'true' });
  });

  it('takes a 429 (Twilio error 20429) as "retry later", after its Retry-After', async () => {
    const refused = await telephony()
      .placeCall(placeCall('+14155550101'))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CallRefused);
    expect(refused).toMatchObject({ reason: 'retry_later', retryAfterSeconds: 1 });
    expect((refused as Error).message).toMatch(/429.*20429/);
  });

  it("takes errors 21211, 21214 and 21217 (the 'To' number) as an invalid destination, anything else as a failed call", async () => {
    for (const to of ['+14155550102', '+14155550103', '+14155550104']) {
      await expect(telephony().placeCall(placeCall(to))).rejects.toMatchObject({ name: 'CallRefused', reason: 'invalid_destination' });
    }
    const geo = await telephony()
      .placeCall(placeCall('+14155550105'))
      .catch((error: unknown) => error);
    expect(geo).not.toBeInstanceOf(CallRefused);
    expect((geo as Error).message).toBe(
      'Twilio answered 400 to create-call (error 21215): Geo Permission configuration is not permitting call',
    );
    const unauthenticated = await telephony('fedcba9876543210fedcba9876543210')
      .placeCall(placeCall('+14155550199'))
      .catch((error: unknown) => error);
    expect(unauthenticated).not.toBeInstanceOf(CallRefused);
    expect((unauthenticated as Error).message).toBe('Twilio answered 401 to create-call (error 20003): Authenticate');
  });
});

// A campaign dispatched through the real app, dialed by the dialer on its job engine, configured as
// TELEPHONY_PROVIDER=twilio would configure it, with Twilio's API at the fake.

const number = (i: number) => `+1415${7_100_000 + i}`;
const MESSAGE = 'Hi {{first_name}}, this is Sam from Acme Dental & Smiles <Main St>. Please call us back.';
const rendered = (name: string) => MESSAGE.replace('{{first_name}}', name);

const SCENARIOS: Record<string, Scenario> = {
  [number(1)]: { kind: 'human', talkSeconds: 95 },
  [number(2)]: { kind: 'machine', answeredBy: 'machine_end_beep', detectionSeconds: 12 },
  [number(3)]: { kind: 'machine', answeredBy: 'machine_start', detectionSeconds: 4 },
  [number(4)]: { kind: 'busy' },
  [number(5)]: { kind: 'no_answer' },
  [number(6)]: { kind: 'failed', sipResponseCode: 404 },
  [number(7)]: { kind: 'failed', sipResponseCode: 503 },
  [number(8)]: { kind: 'rate_limited_once', then: { kind: 'human', talkSeconds: 60 } },
  [number(9)]: { kind: 'refused', code: 21211, message: "Invalid 'To' Phone Number" },
  [number(10)]: { kind: 'machine', answeredBy: 'fax', detectionSeconds: 3 },
  [number(11)]: { kind: 'human', talkSeconds: 30, answeredBy: 'unknown' },
};
/** Numbers whose calls the tests below play by hand. */
const silent = (i: number) => `+1415${7_200_000 + i}`;

let app: TestApp;
let fake: FakeTwilio;
let runtime: DialerRuntime;
let setup: Awaited<ReturnType<typeof runningCampaign>>;

beforeAll(async () => {
  fake = await new FakeTwilio({
    accountSid: ACCOUNT_SID,
    authToken: AUTH_TOKEN,
    scenario: (to) => SCENARIOS[to] ?? { kind: 'silent' },
  }).start();
  const config = loadConfig({
    TELEPHONY_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    TWILIO_API_BASE_URL: fake.url,
    PUBLIC_BASE_URL,
    TWILIO_AGENT_STREAM_URL: STREAM_URL,
    DIALER_SWEEP_SECONDS: '1',
  });
  // The app hands status results to the dialer, which starts once the app (and its database) exists.
  const control: DialerControl = {
    wake: (id, cause) => runtime.control.wake(id, cause),
    report: (result) => runtime.control.report(result),
  };
  app = await startTestApp({ dialer: control, settings: { callRateCentsPerMinute: 60 }, twilioWebhook: config.twilioWebhook });
  // Twilio posts to PUBLIC_BASE_URL; the proxy in front of the app is the fake's forwarding.
  fake.forward = { from: PUBLIC_BASE_URL, to: app.url };
  runtime = await startDialer(dialerEnv(app, systemClock), app.db, config.dialer);
});

afterAll(async () => {
  await runtime?.stop();
  await fake?.close();
  await app?.close();
});

describe('a campaign dialed through Twilio', () => {
  beforeAll(async () => {
    setup = await runningCampaign(app, dialerEnv(app, systemClock), {
      rows: Object.keys(SCENARIOS).map((phone, i) => ({ 'First Name': `Person ${i + 1}`, Phone: phone })),
      campaign: {
        status: 'draft',
        startedAt: null,
        concurrentCalls: 4,
        // One attempt each: every contact's outcome is final after its one call.
        scheduleConfig: { max_attempts: 1, voicemail: { action: 'leave_message', message: MESSAGE } },
      },
    });
    const dispatched = await app.request('POST', `/api/v1/campaigns/${setup.campaignId}/dispatch/`, { token: setup.token, body: {} });
    expect(dispatched.status).toBe(202);
    await campaignCompleted(app, setup.campaignId, 90_000);
    await fake.settled();
  }, 150_000);

  async function attemptsByNumber() {
    const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
    return new Map(attempts.map((a) => [a.toNumber!, a]));
  }

  it('created each call with Basic auth, our voice and status URLs carrying the attempt, the agent and the message', async () => {
    const attempts = await attemptsByNumber();
    const from = setup.agent.phoneNumbers[0]!.number;
    expect(fake.calls).toHaveLength(10);
    for (const call of fake.calls) {
      expect(call.authorization).toBe(`Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`);
      const attempt = attempts.get(String(call.params.To))!;
      const person = `Person ${Object.keys(SCENARIOS).indexOf(attempt.toNumber!) + 1}`;
      expect(call.params).toEqual({
        To: attempt.toNumber,
        From: from,
        Url: expect.any(String),
        StatusCallback: expect.any(String),
        StatusCallbackMethod: 'POST',
        StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
        MachineDetection: 'DetectMessageEnd',
        TimeLimit: '3600',
      });
      const voice = new URL(String(call.params.Url));
      expect(voice.origin + voice.pathname).toBe(`${PUBLIC_BASE_URL}/webhooks/twilio/voice`);
      expect(Object.fromEntries(voice.searchParams)).toEqual({ attempt_id: attempt.id, voicemail_message: rendered(person) });
      const status = new URL(String(call.params.StatusCallback));
      expect(status.origin + status.pathname).toBe(`${PUBLIC_BASE_URL}/webhooks/twilio/status`);
      expect(Object.fromEntries(status.searchParams)).toEqual({ attempt_id: attempt.id, leave_voicemail: 'true' });
      expect(attempt.providerCallId).toBe(call.sid);
    }
  });

  it('answered the voice URL with TwiML: the agent for a person, the rendered message for a voicemail, a hang-up for the rest', async () => {
    const attempts = await attemptsByNumber();
    const byNumber = new Map(fake.twiml.map((t) => [t.to, t]));
    expect(fake.twiml).toHaveLength(6);
    expect(fake.twiml.every((t) => t.status === 200 && t.contentType?.startsWith('text/xml'))).toBe(true);
    for (const [i, answeredBy] of [
      [1, 'human'],
      [8, 'human'],
      [11, 'unknown'],
    ] as const) {
      const attempt = attempts.get(number(i))!;
      expect(attempt).toMatchObject({ agentId: setup.agent.id, agentVersion: 1 });
      const verbs = byNumber.get(number(i))!.verbs;
      expect(verbs).toEqual({
        connect: {
          url: STREAM_URL,
          parameters: {
            attempt_id: attempt.id,
            agent_id: setup.agent.id,
            agent_version: '1',
            token: expect.any(String),
            answered_by: answeredBy,
          },
        },
        hangup: false,
      });
      // The call is over now: its token reads nothing more.
      const { token } = (verbs as { connect: { parameters: Record<string, string> } }).connect.parameters;
      expect((await app.request('GET', '/voice/runtime/config', { token })).status).toBe(401);
    }
    const voicemail = byNumber.get(number(2))!;
    expect(voicemail.verbs).toEqual({ say: rendered('Person 2'), hangup: true });
    expect(voicemail.text).toContain('Acme Dental &amp; Smiles &lt;Main St&gt;');
    expect(byNumber.get(number(3))!.verbs).toEqual({ hangup: true });
    expect(byNumber.get(number(10))!.verbs).toEqual({ hangup: true });
  });

  it('ended each attempt with the status, outcome, duration and cost its calls earned', async () => {
    const attempts = await attemptsByNumber();
    const seen = Object.fromEntries(
      [...attempts].map(([to, a]) => [
        to,
        [a.status, a.outcome, a.durationSeconds, Number(a.costCents), a.disconnectReason, a.pendingResult, a.leaseExpiresAt],
      ]),
    );
    const voicemailSeconds = 12 + sayingSeconds(rendered('Person 2'));
    // 60 cents a minute: a cent a second; ringing, a machine hung up on and calls that never connected cost nothing.
    expect(seen).toEqual({
      [number(1)]: ['completed', 'human', 97, 97, 'completed', null, null],
      [number(2)]: ['voicemail', 'voicemail', voicemailSeconds, voicemailSeconds, 'machine_end_beep', null, null],
      [number(3)]: ['voicemail', 'voicemail', 4, 0, 'machine_start', null, null],
      [number(4)]: ['busy', 'busy', 0, 0, 'busy', null, null],
      [number(5)]: ['no_answer', 'no_answer', 0, 0, 'no_answer', null, null],
      [number(6)]: ['failed', 'invalid_number', 0, 0, 'sip_404', null, null],
      [number(7)]: ['failed', 'failed', 0, 0, 'sip_503', null, null],
      [number(8)]: ['completed', 'human', 62, 62, 'completed', null, null],
      [number(9)]: ['failed', 'invalid_number', 0, 0, 'invalid_destination', null, null],
      [number(10)]: ['failed', 'failed', 3, 0, 'fax', null, null],
      [number(11)]: ['completed', 'human', 32, 32, 'completed', null, null],
    });
  });

  it('gave every contact its final outcome, the rate-limited one after a retry that spent none of its attempts', async () => {
    const enrolled = await app.prisma.campaignContact.findMany({ where: { campaignId: setup.campaignId }, include: { contact: true } });
    const outcomes = Object.fromEntries(enrolled.map((cc) => [cc.contact.phoneNumber, [cc.outcome, cc.attempts]]));
    expect(outcomes).toEqual({
      [number(1)]: ['reached', 1],
      [number(2)]: ['not_reached', 1],
      [number(3)]: ['not_reached', 1],
      [number(4)]: ['not_reached', 1],
      [number(5)]: ['not_reached', 1],
      [number(6)]: ['invalid', 1],
      [number(7)]: ['not_reached', 1],
      [number(8)]: ['reached', 1],
      [number(9)]: ['invalid', 1],
      [number(10)]: ['not_reached', 1],
      [number(11)]: ['reached', 1],
    });
    expect(fake.requests.filter((r) => r.to === number(8)).map((r) => r.status)).toEqual([429, 201]);
    expect(fake.requests.filter((r) => r.to === number(9)).map((r) => [r.status, r.code])).toEqual([[400, 21211]]);
  });

  it('charged the billed seconds, with the ledger equal to the balance and nothing left held', async () => {
    const { ledger, account, account_ } = await ledgerMatchesAccount(app, setup.userId);
    expect(ledger).toBe(account);
    expect(account_.heldCents).toBe(0n);
    expect(10_000_000n - account).toBe(BigInt(97 + 12 + sayingSeconds(rendered('Person 2')) + 62 + 32));
    const charges = await app.prisma.creditTransaction.findMany({ where: { userId: setup.userId, kind: 'call_charge' } });
    expect(charges).toHaveLength(4);
  });

  it('answered every callback at once and recorded each delivery it applied once', async () => {
    expect(fake.deliveries.every((d) => d.status === 200)).toBe(true);
    const applied = fake.deliveries.filter((d) => d.body.result === 'applied');
    const ignored = fake.deliveries.filter((d) => d.body.result === 'ignored');
    // Answered calls: in-progress and their end; the others: their end alone. initiated and ringing are of no use.
    expect(applied.map((d) => d.params.CallStatus).sort()).toEqual(
      [...Array(6).fill('completed'), ...Array(6).fill('in-progress'), 'busy', 'failed', 'failed', 'no-answer'].sort(),
    );
    expect(ignored.every((d) => ['initiated', 'ringing'].includes(d.params.CallStatus!))).toBe(true);
    expect(applied.length + ignored.length).toBe(fake.deliveries.length);
    expect(await app.prisma.webhookDelivery.count({ where: { source: 'twilio' } })).toBe(applied.length);
  });
});

// Each test first dials a call through the dialer and waits for it to ring: on a loaded machine that
// alone can take most of the default limit.
describe('Twilio webhooks, one request at a time', { timeout: 120_000 }, () => {
  let seq = 0;

  /** A running campaign of one contact whose call the fake creates and leaves for the test to play. */
  async function dialOne(campaign: Record<string, unknown> = {}) {
    seq += 1;
    const phone = silent(seq);
    const env = dialerEnv(app, systemClock);
    const one = await runningCampaign(app, env, { rows: [{ 'First Name': 'Ann', Phone: phone }], campaign });
    await runtime.control.wake(one.campaignId);
    const call = await waitFor(async () => fake.calls.find((c) => c.params.To === phone), 30_000, 'the call to be created');
    await waitFor(
      async () => ((await attemptOf(one.campaignId)).providerCallId === call.sid ? true : undefined),
      30_000,
      'the call to be ringing',
    );
    return { ...one, call };
  }

  const attemptOf = (campaignId: string) => app.prisma.callAttempt.findFirstOrThrow({ where: { campaignId } });

  /** Everything a callback could change, for "nothing changed" checks. */
  async function state(campaignId: string, userId: string) {
    const [attempts, contacts, account, transactions, deliveries] = await Promise.all([
      app.prisma.callAttempt.findMany({ where: { campaignId } }),
      app.prisma.campaignContact.findMany({ where: { campaignId } }),
      app.prisma.creditAccount.findUnique({ where: { userId } }),
      app.prisma.creditTransaction.findMany({ where: { userId } }),
      app.prisma.webhookDelivery.count({ where: { source: 'twilio' } }),
    ]);
    return { attempts, contacts, account, transactions, deliveries };
  }

  const final = (campaignId: string) =>
    waitFor(
      async () => {
        const attempt = await attemptOf(campaignId);
        return attempt.outcome !== null ? attempt : undefined;
      },
      30_000,
      'the attempt to end',
    );

  const ENDED = { CallDuration: '40', SipResponseCode: '200', AnsweredBy: 'human' };

  it('applies a repeated callback once: a second in-progress or completed changes nothing', async () => {
    const { call, campaignId, userId } = await dialOne();
    expect((await fake.status(call, 'in-progress'))!.body).toEqual({ received: true, result: 'applied' });
    expect(await attemptOf(campaignId)).toMatchObject({ status: 'in_progress', startedAt: expect.any(Date) });
    expect((await fake.status(call, 'in-progress'))!.body.result).toBe('duplicate');

    expect((await fake.status(call, 'completed', ENDED))!.body.result).toBe('applied');
    expect(await final(campaignId)).toMatchObject({ status: 'completed', outcome: 'human', durationSeconds: 40, costCents: 40n });
    const before = await state(campaignId, userId);
    const again = await Promise.all([1, 2, 3].map(() => fake.status(call, 'completed', ENDED)));
    expect(again.map((d) => d!.body.result)).toEqual(['duplicate', 'duplicate', 'duplicate']);
    // A late in-progress for a call already ended is recorded and ignored.
    const late = await fake.send(String(call.params.StatusCallback), {
      AccountSid: ACCOUNT_SID,
      CallSid: call.sid,
      CallStatus: 'answered',
    });
    expect(late.body.result).toBe('ignored');
    expect({ ...(await state(campaignId, userId)), deliveries: 0 }).toEqual({ ...before, deliveries: 0 });
    expect(await app.prisma.webhookDelivery.count({ where: { source: 'twilio', eventKey: `${call.sid}:completed` } })).toBe(1);
  });

  it('refuses a missing, wrong, tampered or misplaced signature with 400 on x-twilio-signature, and changes nothing', async () => {
    const { call, campaignId, userId } = await dialOne();
    const before = await state(campaignId, userId);
    const params = { AccountSid: ACCOUNT_SID, CallSid: call.sid, CallStatus: 'completed', CallDuration: '40', AnsweredBy: 'human' };
    const url = String(call.params.StatusCallback);
    const tries = [
      fake.send(url, params, { token: 'fedcba9876543210fedcba9876543210' }),
      fake.send(url, params, { tamper: (p) => ({ ...p, CallDuration: '4000' }) }),
      fake.send(url, params, { tamper: (p) => ({ ...p, Extra: '1' }) }),
      fake.send(url, params, { signature: null }),
      fake.send(url, params, { signature: 'sha1=deadbeef' }),
      fake.send(url.replace(/attempt_id=[^&]+/, `attempt_id=${ATTEMPT}`), params, {
        signature: signatureOf(AUTH_TOKEN, url, params),
      }),
      // Signed over the address the app listens at, not the public URL Twilio was given.
      fake.send(url.replace(PUBLIC_BASE_URL, app.url), params),
      fake.send(String(call.params.Url), { ...params, CallStatus: 'in-progress' }, { token: 'fedcba9876543210fedcba9876543210' }),
    ];
    for (const attempt of await Promise.all(tries)) {
      expect(attempt.status).toBe(400);
      expect(Object.keys(attempt.body)).toEqual(['x-twilio-signature']);
    }
    expect(await state(campaignId, userId)).toEqual(before);
  });

  it('refuses hostile input with a 4xx, never a 500, and changes nothing', async () => {
    const { call, campaignId, userId } = await dialOne();
    const before = await state(campaignId, userId);
    const url = String(call.params.StatusCallback);
    const base = { AccountSid: ACCOUNT_SID, CallSid: call.sid, CallStatus: 'completed', CallDuration: '40' };
    const signed = [
      [{ ...base, AnsweredBy: 'hu\u0000man' }, 'AnsweredBy'],
      [{ ...base, CallStatus: 'x'.repeat(100_000) }, 'CallStatus'],
      [{ ...base, CallDuration: '99999999999999999999' }, 'CallDuration'],
      [{ ...base, CallSid: 'CA-not-a-sid' }, 'CallSid'],
    ] as const;
    for (const [params, field] of signed) {
      const res = await fake.send(url, params);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual([field]);
    }
    const raw = (body: BodyInit, contentType = 'application/x-www-form-urlencoded', headers: Record<string, string> = {}) =>
      fetch(`${app.url}/webhooks/twilio/status${new URL(url).search}`, {
        method: 'POST',
        headers: { 'content-type': contentType, ...headers },
        body,
      });
    // A repeated name, signed as Twilio's libraries sign one.
    const search = new URL(url).search;
    const repeated = `CallSid=${call.sid}&CallSid=${call.sid}&CallStatus=completed`;
    const repeatedSignature = twilioSignature(AUTH_TOKEN, `${PUBLIC_BASE_URL}/webhooks/twilio/status${search}`, [
      ['CallSid', call.sid],
      ['CallSid', call.sid],
      ['CallStatus', 'completed'],
    ]);
    const repeatedRes = await raw(repeated, undefined, { 'x-twilio-signature': repeatedSignature });
    expect(repeatedRes.status).toBe(400);
    expect(Object.keys(await repeatedRes.json())).toEqual(['CallSid']);
    expect((await raw('x'.repeat(2 * 1024 * 1024))).status).toBe(413);
    expect((await raw(JSON.stringify(base), 'application/json')).status).toBe(415);
    // Percent-escapes that decode to no UTF-8, and bytes that are none: refused before anything is read.
    expect((await raw('%FF%FE=%C0')).status).toBe(400);
    const notUtf8 = await raw(new Uint8Array([0x43, 0xff, 0x3d, 0x31]));
    expect([notUtf8.status, await notUtf8.json()]).toEqual([400, { non_field_errors: ['The body is not UTF-8.'] }]);
    expect(await state(campaignId, userId)).toEqual(before);
  });

  it('ignores a call that is not ours and statuses of no use, recording nothing', async () => {
    const { call, campaignId, userId } = await dialOne();
    const before = await state(campaignId, userId);
    const url = String(call.params.StatusCallback);
    const stranger = { AccountSid: ACCOUNT_SID, CallSid: `CA${'f'.repeat(32)}`, CallStatus: 'completed', CallDuration: '40' };
    expect((await fake.send(url, stranger)).body).toEqual({ received: true, result: 'ignored' });
    const unknownAttempt = url.replace(/attempt_id=[^&]+/, 'attempt_id=0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c');
    expect((await fake.send(unknownAttempt, { ...stranger, CallSid: call.sid })).body.result).toBe('ignored');
    for (const status of ['queued', 'initiated', 'ringing']) expect((await fake.status(call, status))!.body.result).toBe('ignored');
    expect(await state(campaignId, userId)).toEqual(before);
  });

  it('hangs up on a machine when the campaign leaves no message: the call is a voicemail, billed nothing', async () => {
    const { call, campaignId } = await dialOne({ scheduleConfig: { max_attempts: 1, voicemail: { action: 'hang_up' } } });
    // No message to leave: nothing but the attempt in the voice URL.
    expect(Object.fromEntries(new URL(String(call.params.Url)).searchParams)).toEqual({ attempt_id: expect.any(String) });
    expect(new URL(String(call.params.StatusCallback)).searchParams.has('leave_voicemail')).toBe(false);
    const voice = await fetchTwiml(call, 'machine_end_beep');
    expect(readTwiml(voice)).toEqual({ hangup: true });
    await fake.status(call, 'completed', { CallDuration: '15', AnsweredBy: 'machine_end_beep' });
    expect(await final(campaignId)).toMatchObject({ status: 'voicemail', outcome: 'voicemail', durationSeconds: 15, costCents: 0n });
  });

  it("gives a person's stream the call's agent and a token with which the runtime reads the agent, the tools and the contact's variables, until the call ends", async () => {
    seq += 1;
    const phone = silent(seq);
    const one = await runningCampaign(app, dialerEnv(app, systemClock), {
      rows: [{ 'First Name': 'Ann', Phone: phone, Plan: 'Gold' }],
      campaign: { transferNumber: '+14155550999' },
    });
    const agent = await app.prisma.agent.findUniqueOrThrow({ where: { id: one.agent.id } });
    await runtime.control.wake(one.campaignId);
    const call = await waitFor(async () => fake.calls.find((c) => c.params.To === phone), 30_000, 'the call to be created');
    const attempt = await waitFor(
      async () => {
        const a = await attemptOf(one.campaignId);
        return a.providerCallId === call.sid ? a : undefined;
      },
      30_000,
      'the call to be ringing',
    );
    await fake.status(call, 'in-progress');
    const verbs = readTwiml(await fetchTwiml(call, 'human')) as { connect: { parameters: Record<string, string> } };
    const { token, ...parameters } = verbs.connect.parameters;
    expect(parameters).toEqual({ attempt_id: attempt.id, agent_id: agent.id, agent_version: String(agent.version), answered_by: 'human' });

    const config = await app.request('GET', '/voice/runtime/config', { token });
    expect(config.status).toBe(200);
    expect(config.headers.get('cache-control')).toBe('no-store');
    expect(config.json).toEqual({
      attempt_id: attempt.id,
      expires_at: new Date(attempt.createdAt.getTime() + 15 * 60_000).toISOString(),
      agent: { id: agent.id, name: agent.name, version: agent.version, settings_version: agent.version },
      prompt: {
        system_prompt: agent.systemPrompt,
        // A +1 415 number is in California, whose AB 2905 requires the disclosure first.
        begin_message: expect.stringMatching(new RegExp(`^${AI_DISCLOSURE_SENTENCE.replace(/[.?]/g, '\\$&')}`)),
        ai_disclosure: { required: true, region: 'US-CA', rule: expect.stringContaining('AB 2905'), source: expect.any(String) },
      },
      model: { model: expect.any(String), temperature: expect.any(Number) },
      voice: expect.objectContaining({ voice_id: expect.any(String) }),
      tools: JSON.parse(JSON.stringify(IN_CALL_TOOLS)),
      dynamic_variables: { first_name: 'Ann', Plan: 'Gold', transfer_number: '+14155550999' },
    });

    const refused = async (authorization: string | undefined) => {
      const res = await app.request('GET', '/voice/runtime/config', authorization === undefined ? {} : { headers: { authorization } });
      return { status: res.status, body: res.json };
    };
    expect(await refused(undefined)).toEqual({ status: 401, body: { detail: 'Authentication credentials were not provided.' } });
    const [payload, signature] = token!.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, e: claims.e + 3_600_000 })).toString('base64url');
    for (const bad of [`${forged}.${signature}`, `${payload}.${signature!.slice(1)}x`, 'not-a-token', `${payload}.${signature}.x`]) {
      expect((await refused(`Bearer ${bad}`)).status).toBe(401);
    }
    // Signed with our own key: expired, or naming another agent or another customer's call.
    const { secret } = await app.prisma.signingKey.findUniqueOrThrow({ where: { name: 'voice-runtime' } });
    const signed = (grant: Partial<RuntimeGrant>) =>
      `Bearer ${runtimeToken(Buffer.from(secret), { attemptId: attempt.id, agentId: agent.id, agentVersion: agent.version, expiresAt: new Date(Date.now() + 60_000), ...grant })}`;
    expect((await refused(signed({ expiresAt: new Date(Date.now() - 1000) }))).status).toBe(401);
    const other = await dialOne();
    const otherAttempt = await attemptOf(other.campaignId);
    expect(await refused(signed({ agentId: other.agent.id }))).toEqual({ status: 404, body: { detail: 'Not found.' } });
    expect(await refused(signed({ attemptId: otherAttempt.id }))).toEqual({ status: 404, body: { detail: 'Not found.' } });
    expect((await refused(signed({}))).status).toBe(200);

    await fake.status(call, 'completed', ENDED);
    await final(one.campaignId);
    expect(await refused(`Bearer ${token}`)).toEqual({
      status: 401,
      body: { detail: 'Given token not valid for any token type', code: 'token_not_valid' },
    });
    await fake.status(other.call, 'no-answer');
  });

  it('answers 503 on both routes while Twilio is not configured', async () => {
    const unconfigured = await startTestApp();
    try {
      for (const path of ['/webhooks/twilio/voice', '/webhooks/twilio/status']) {
        const res = await unconfigured.request('POST', path, {
          raw: 'CallSid=x',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        expect(res.status).toBe(503);
        expect(res.json.detail).toMatch(/^Twilio webhooks are not configured/);
      }
    } finally {
      await unconfigured.close();
    }
  });

  /** Posts the call's voice URL as Twilio does after detection, signed; the TwiML text. */
  async function fetchTwiml(call: CreatedCall, answeredBy: string): Promise<string> {
    const res = await fake.send(String(call.params.Url), {
      AccountSid: ACCOUNT_SID,
      CallSid: call.sid,
      CallStatus: 'in-progress',
      AnsweredBy: answeredBy,
    });
    expect(res.status).toBe(200);
    return res.body as string;
  }
});
