import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiDisclosure, AI_DISCLOSURE_SENTENCE } from '../src/services/calling-rules/disclosure.js';
import type { ServiceEnv } from '../src/services/context.js';
import { BRAIN_ENGINE, CLOSING_LINE } from '../src/services/voice/brain/conversation.js';
import { openLlm } from '../src/services/voice/brain/llm.js';
import { loadSocketSecret, socketToken } from '../src/services/voice/brain/socket-url.js';
import { brainTools } from '../src/services/voice/brain/tools.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, recordingDialer, runningCampaign } from './support/dialer.js';
import { FakeLlm, lastUserText, type ChatRequest, type LlmReply } from './support/fake-llm.js';
import { RefusedUpgrade, RetellLlmClient, type Utterance } from './support/retell-llm-client.js';
import { waitFor } from './support/wait.js';

// The built-in agent over Retell's LLM WebSocket, end to end: a Retell-side client on a real socket of
// the app, calls placed by the dialer and in flight in the database, and an OpenAI-compatible fake
// streaming the LLM's side.

const GREETING = 'Hi, this is Sam from Acme Dental.';
const CALIFORNIA = '+14155550142';
const TEXAS = '+15125550142';
const FRANCE = '+33612345678';

/** What the fake LLM answers: by the last thing the callee said, and after a tool's answer, by that answer. */
const replies = new Map<string, LlmReply>();
const afterTool = new Map<string, (answer: Record<string, any>) => LlmReply>();
function script(request: ChatRequest): LlmReply {
  const last = request.messages.at(-1)!;
  if (last.role !== 'tool') return replies.get(lastUserText(request)) ?? { text: 'Sorry?' };
  return afterTool.get(lastUserText(request))?.(JSON.parse(last.content!)) ?? { text: 'Done.' };
}

const CALENDAR = {
  timeZone: 'America/New_York',
  weeklyHours: ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, start: '09:00', end: '12:00' })),
  slotMinutes: 30,
  capacityPerSlot: 1,
  horizonDays: 14,
};

let app: TestApp;
let llm: FakeLlm;
let env: ServiceEnv;
let agentId: string;
let campaignId: string;
let customerToken: string;
let dialer: ReturnType<typeof recordingDialer>;
/** Provider call id of each callee's call in flight. */
const calls = new Map<string, string>();

beforeAll(async () => {
  llm = await new FakeLlm(script).start();
  app = await startTestApp({
    brain: { llm: openLlm({ baseUrl: `${llm.url}/v1`, apiKey: 'test-key', model: 'fake-model', timeoutMs: 1_000 }), tools: brainTools },
  });
  env = dialerEnv(app, { now: () => new Date() });
  const rows = [CALIFORNIA, TEXAS, FRANCE, '+14155550143', '+14155550144', '+14155550145', '+14155550146'].map((Phone, i) => ({
    Name: `Callee ${i}`,
    Phone,
  }));
  const setup = await runningCampaign(app, env, { rows });
  agentId = setup.agent.id;
  campaignId = setup.campaignId;
  customerToken = setup.token;
  const calendar = await app.gql(
    `mutation ($id: UUID!, $input: CampaignCallToolsInput!) { setCampaignCallTools(id: $id, input: $input) { id } }`,
    { id: campaignId, input: { bookingCalendar: CALENDAR } },
    customerToken,
  );
  expect(calendar.errors).toBeUndefined();
  await app.prisma.agent.update({
    where: { id: agentId },
    data: { responseEngineType: BRAIN_ENGINE, agentProfile: { begin_message: GREETING }, systemPrompt: 'You book dental cleanings.' },
  });
  // The calls stay in flight: no result comes until the test ends them.
  dialer = recordingDialer(env, () => null);
  const { run, telephony } = dialer;
  await run(campaignId);
  for (const placed of telephony.placed) calls.set(placed.to, `fake_${placed.attemptId}`);
});

/** Closed once, by the shutdown test or after the others. */
let appClosed: Promise<void> | undefined;
const closeApp = () => (appClosed ??= app.close());

afterAll(async () => {
  if (app) await closeApp();
  await llm?.close();
});

async function socketUrl(providerCallId: string, agent = agentId) {
  const token = socketToken(await loadSocketSecret(app.sql), agent);
  return `${app.url.replace(/^http/, 'ws')}/voice/retell/llm/${token}/${providerCallId}`;
}

async function connect(to: string) {
  const client = await RetellLlmClient.connect(await socketUrl(calls.get(to)!));
  const config = await client.next((f) => f.response_type === 'config');
  const begin = await client.next((f) => f.response_type === 'response' && f.response_id === 0);
  return { client, config: config.frame, begin: begin.frame };
}

const attemptOf = (to: string) => app.prisma.callAttempt.findFirstOrThrow({ where: { campaignId, toNumber: to } });

describe('the built-in agent on Retell’s LLM socket', () => {
  it('runs a conversation: config, the disclosure first in California, streamed answers, a tool through the runner, end_call', async () => {
    const { client, config, begin } = await connect(CALIFORNIA);
    expect(config.config).toEqual({ auto_reconnect: true, call_details: false });
    expect(begin).toEqual({
      response_type: 'response',
      response_id: 0,
      content: `${AI_DISCLOSURE_SENTENCE} ${GREETING}`,
      content_complete: true,
    });
    const attempt = await attemptOf(CALIFORNIA);
    const heard: Utterance[] = [{ role: 'agent', content: begin.content }];

    heard.push({ role: 'user', content: 'Hello, who is this?' });
    replies.set('Hello, who is this?', { text: 'I am calling to book your cleaning. Is now a good time?' });
    const first = await client.respond(1, heard);
    // Streamed: one frame per token as the LLM sent them, then the closing frame.
    const said = first.frames.filter((f) => f.response_type === 'response' && !f.content_complete);
    expect(said.length).toBeGreaterThan(3);
    expect(first.content).toBe('I am calling to book your cleaning. Is now a good time?');
    expect(first.last).toEqual({ response_type: 'response', response_id: 1, content: '', content_complete: true });
    const request = llm.requests.at(-1)!;
    expect(request).toMatchObject({ model: 'fake-model', stream: true });
    expect(request.messages).toEqual([
      { role: 'system', content: 'You book dental cleanings.' },
      { role: 'assistant', content: begin.content },
      { role: 'user', content: 'Hello, who is this?' },
    ]);
    expect(request.tools!.map((t) => t.function.name)).toEqual([
      'check_availability',
      'book_appointment',
      'add_to_do_not_call',
      'schedule_callback',
      'transfer_call',
      'end_call',
    ]);
    // The turn's end keeps the transcript on the attempt.
    await waitFor(async () => ((await attemptOf(CALIFORNIA)).transcript?.includes('Is now a good time?') ? true : undefined), 10_000);
    expect((await attemptOf(CALIFORNIA)).transcript).toBe(
      `Agent: ${begin.content}\nUser: Hello, who is this?\nAgent: I am calling to book your cleaning. Is now a good time?`,
    );

    heard.push({ role: 'agent', content: first.content }, { role: 'user', content: 'Can I come in soon?' });
    replies.set('Can I come in soon?', { text: 'Let me look. ', toolCalls: [{ name: 'check_availability', arguments: '{"limit":3}' }] });
    afterTool.set('Can I come in soon?', (answer) =>
      answer.slots
        ? { toolCalls: [{ name: 'book_appointment', arguments: JSON.stringify({ start: answer.slots[0].start, notes: 'Cleaning' }) }] }
        : { text: `You are booked for ${answer.spoken}.` },
    );
    const second = await client.respond(2, heard);
    const invocations = second.frames.filter((f) => f.response_type === 'tool_call_invocation');
    const results = second.frames.filter((f) => f.response_type === 'tool_call_result');
    expect(invocations.map((f) => f.name)).toEqual(['check_availability', 'book_appointment']);
    expect(invocations[0]).toEqual({
      response_type: 'tool_call_invocation',
      tool_call_id: invocations[0]!.tool_call_id,
      name: 'check_availability',
      arguments: '{"limit":3}',
    });
    expect(results.map((f) => f.tool_call_id)).toEqual(invocations.map((f) => f.tool_call_id));
    // Each result follows its invocation, and carries the runner's answer.
    const kinds = second.frames.map((f) => f.response_type);
    expect(kinds.filter((k) => k.startsWith('tool_call'))).toEqual([
      'tool_call_invocation',
      'tool_call_result',
      'tool_call_invocation',
      'tool_call_result',
    ]);
    const slots = JSON.parse(results[0]!.content).slots;
    expect(slots).toHaveLength(3);
    const booked = JSON.parse(results[1]!.content);
    expect(booked).toMatchObject({ booked: true, start: slots[0].start, time_zone: 'America/New_York' });
    expect(second.content).toBe(`Let me look. You are booked for ${booked.spoken}.`);
    // The completion went on with each tool's answer.
    const continued = llm.requests.at(-1)!;
    expect(continued.messages.at(-2)).toMatchObject({
      role: 'assistant',
      tool_calls: [{ id: invocations[1]!.tool_call_id, type: 'function' }],
    });
    expect(continued.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: invocations[1]!.tool_call_id, content: results[1]!.content });
    // The appointment is there while the call goes on, as the customer reads it.
    const read = await app.gql(
      `query($id: UUID!) { appointments(campaignId: $id) { edges { node { id status scheduledAt callAttemptId } } } }`,
      { id: campaignId },
      customerToken,
    );
    expect(read.errors).toBeUndefined();
    expect(read.data.appointments.edges).toEqual([
      {
        node: {
          id: booked.appointment_id,
          status: expect.any(String),
          scheduledAt: new Date(slots[0].start).toISOString(),
          callAttemptId: attempt.id,
        },
      },
    ]);
    expect((await attemptOf(CALIFORNIA)).status).not.toBe('completed');

    heard.push({ role: 'agent', content: second.content }, { role: 'user', content: 'No thanks, bye.' });
    replies.set('No thanks, bye.', { text: 'Alright, have a good day!', toolCalls: [{ name: 'end_call', arguments: '{}' }] });
    const third = await client.respond(3, heard);
    expect(third.content).toBe('Alright, have a good day!');
    expect(third.last).toEqual({ response_type: 'response', response_id: 3, content: '', content_complete: true, end_call: true });
    expect(third.frames.some((f) => f.response_type === 'tool_call_invocation')).toBe(false);
    await client.close();
    await waitFor(
      async () => ((await attemptOf(CALIFORNIA)).transcript?.endsWith('Agent: Alright, have a good day!') ? true : undefined),
      10_000,
    );
    const kept = (await attemptOf(CALIFORNIA)).transcript;

    // The call's end, reported without a transcript of its own, keeps the one the brain wrote.
    dialer.dialer.report({ attemptId: attempt.id, outcome: 'human', durationSeconds: 42 });
    await dialer.dialer.settled();
    expect(await attemptOf(CALIFORNIA)).toMatchObject({ status: 'completed', transcript: kept });
  });

  it('greets a Texas callee without the disclosure, and a French one with it (EU AI Act, in force)', async () => {
    const texas = await connect(TEXAS);
    expect(texas.begin.content).toBe(GREETING);
    await texas.client.close();
    const france = await connect(FRANCE);
    expect(france.begin.content).toBe(`${AI_DISCLOSURE_SENTENCE} ${GREETING}`);
    await france.client.close();
  });

  it('says nothing new when Retell reopens the socket of a call that began', async () => {
    const again = await connect(TEXAS);
    expect(again.begin).toEqual({ response_type: 'response', response_id: 0, content: '', content_complete: true });
    await again.client.close();
  });

  it('closes the call politely when the LLM fails or goes quiet, and keeps the socket alive', async () => {
    const { client, begin } = await connect('+14155550143');
    replies.set('Is this about my appointment?', { status: 500 });
    const failed = await client.respond(1, [
      { role: 'agent', content: begin.content },
      { role: 'user', content: 'Is this about my appointment?' },
    ]);
    expect(failed.last).toEqual({
      response_type: 'response',
      response_id: 1,
      content: CLOSING_LINE,
      content_complete: true,
      end_call: true,
    });

    replies.set('Hello?', { hang: true });
    const quiet = await client.respond(2, [{ role: 'user', content: 'Hello?' }]);
    expect(quiet.content).toBe(CLOSING_LINE);
    expect(quiet.last.end_call).toBe(true);

    // A malformed frame is skipped; the socket still answers.
    client.send({ interaction_type: 'response_required', response_id: 'x' });
    client.ws.send('not json');
    const from = client.frames.length;
    client.send({ interaction_type: 'ping_pong', timestamp: 123 });
    expect((await client.next((f) => f.response_type === 'ping_pong', from)).frame).toEqual({ response_type: 'ping_pong', timestamp: 123 });
    await client.close();
  });

  it("transfers to the campaign's number through transfer_call, and tells the LLM a tool was refused once the call is over", async () => {
    const set = await app.gql(
      `mutation ($id: UUID!, $input: CampaignCallToolsInput!) { setCampaignCallTools(id: $id, input: $input) { transferNumber } }`,
      { id: campaignId, input: { transferNumber: '+14155550199' } },
      customerToken,
    );
    expect(set.errors).toBeUndefined();
    const { client } = await connect('+14155550145');
    replies.set('Can I talk to a person?', { text: 'Of course, one moment.', toolCalls: [{ name: 'transfer_call', arguments: '{}' }] });
    const transfer = await client.respond(1, [{ role: 'user', content: 'Can I talk to a person?' }]);
    expect(transfer.content).toBe('Of course, one moment.');
    expect(transfer.last).toEqual({
      response_type: 'response',
      response_id: 1,
      content: '',
      content_complete: true,
      transfer_number: '+14155550199',
    });

    // The call's end was reported while the socket stayed open: the runner refuses, the LLM hears why.
    await app.prisma.callAttempt.updateMany({ where: { campaignId, toNumber: '+14155550145' }, data: { status: 'completed' } });
    replies.set('Please call me back tomorrow.', {
      toolCalls: [{ name: 'schedule_callback', arguments: '{"local_time":"2026-12-01T10:00"}' }],
    });
    afterTool.set('Please call me back tomorrow.', () => ({ text: 'I could not do that.' }));
    const refused = await client.respond(2, [{ role: 'user', content: 'Please call me back tomorrow.' }]);
    const result = refused.frames.find((f) => f.response_type === 'tool_call_result')!;
    expect(JSON.parse(result.content)).toEqual({ error: 'refused', message: expect.stringContaining('over') });
    expect(refused.content).toBe('I could not do that.');
    await client.close();
  });

  it('drops an answer a newer request replaces', async () => {
    const { client } = await connect('+14155550144');
    replies.set('Tell me everything.', { text: 'word '.repeat(200), tokenMs: 20 });
    replies.set('Actually, stop.', { text: 'Sure.' });
    const from = client.frames.length;
    client.send({ interaction_type: 'response_required', response_id: 1, transcript: [{ role: 'user', content: 'Tell me everything.' }] });
    await client.next((f) => f.response_type === 'response' && f.response_id === 1, from);
    const long = llm.requests.length - 1;
    const second = await client.respond(2, [{ role: 'user', content: 'Actually, stop.' }]);
    expect(second.content).toBe('Sure.');
    const secondStarted = client.frames.findIndex((f) => f.response_id === 2);
    // The replaced completion was cancelled at the LLM, not left to run on, and nothing of it followed the new one.
    await waitFor(async () => (llm.cancelled.has(long) ? true : undefined), 10_000);
    expect(client.frames.slice(secondStarted).filter((f) => f.response_id === 1)).toEqual([]);
    expect(client.frames.some((f) => f.response_id === 1 && f.content_complete)).toBe(false);
    await client.close();
  });

  it('waits for a call whose id the dialer has not stored yet, as when Retell opens the socket before create-call answers', async () => {
    const late = await attemptOf('+14155550146');
    await app.prisma.callAttempt.update({ where: { id: late.id }, data: { providerCallId: null } });
    const connecting = RetellLlmClient.connect(await socketUrl('call_answered_late'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await app.prisma.callAttempt.update({ where: { id: late.id }, data: { providerCallId: 'call_answered_late' } });
    const client = await connecting;
    expect((await client.next((f) => f.response_type === 'response' && f.response_id === 0)).frame.content).toBe(
      `${AI_DISCLOSURE_SENTENCE} ${GREETING}`,
    );
    await client.close();
  });

  it('refuses a socket for an unknown call, a wrong token, another engine or a finished call', async () => {
    const refusal = (url: string) =>
      RetellLlmClient.connect(url).then(
        async (client) => {
          await client.close();
          return 101;
        },
        (error: unknown) => (error instanceof RefusedUpgrade ? error.status : Promise.reject(error)),
      );
    expect(await refusal(await socketUrl('call_unknown'))).toBe(404);
    expect(await refusal(await socketUrl(calls.get(TEXAS)!, 'another-agent'))).toBe(404);
    expect(await refusal(`${app.url.replace(/^http/, 'ws')}/voice/retell/llm/short`)).toBe(404);

    await app.prisma.agent.update({ where: { id: agentId }, data: { responseEngineType: 'retell-llm' } });
    expect(await refusal(await socketUrl(calls.get(TEXAS)!))).toBe(409);
    await app.prisma.agent.update({ where: { id: agentId }, data: { responseEngineType: BRAIN_ENGINE } });

    await app.prisma.callAttempt.updateMany({ where: { campaignId, toNumber: TEXAS }, data: { status: 'completed' } });
    expect(await refusal(await socketUrl(calls.get(TEXAS)!))).toBe(409);
    expect((await app.request('GET', '/healthz')).status).toBe(200);
  });
});

describe('the AI disclosure rule', () => {
  it('applies in California, and in the EU from 2026-08-02; not in Texas; an unknown region discloses', () => {
    const now = new Date('2026-11-30T12:00:00Z');
    expect(aiDisclosure('US-CA', now)).toMatchObject({ required: true, rule: { name: expect.stringContaining('AB 2905') } });
    expect(aiDisclosure('US-TX', now)).toEqual({ required: false });
    expect(aiDisclosure('DE', new Date('2026-08-01T23:59:59Z'))).toEqual({ required: false });
    expect(aiDisclosure('DE', new Date('2026-08-02T00:00:00Z'))).toMatchObject({
      required: true,
      rule: { name: expect.stringContaining('AI Act') },
    });
    expect(aiDisclosure('fr', now).required).toBe(true);
    expect(aiDisclosure('GB', now)).toEqual({ required: false });
    expect(aiDisclosure(null, now)).toEqual({ required: true });
  });
});

describe('shutting down', () => {
  it('closes open sockets with 1001 (going away), so that Retell reconnects to another instance', async () => {
    const { client } = await connect(FRANCE);
    await closeApp();
    await waitFor(async () => client.closed, 10_000, 'the socket to close');
    expect(client.closed).toEqual({ code: 1001, reason: 'server shutting down' });
  });
});
