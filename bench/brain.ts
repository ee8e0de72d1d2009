import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pino } from 'pino';
import { openDatabase } from '../src/db/database.js';
import { seedAgentTemplates } from '../src/db/seed.js';
import { createAgent } from '../src/services/agents/agents.js';
import { importContacts } from '../src/services/contacts/import.js';
import { serviceContext, systemClock, type ServiceEnv } from '../src/services/context.js';
import { idleDialer } from '../src/services/dialer/control.js';
import { inProcessEventBus } from '../src/services/events.js';
import { defaultSettings } from '../src/services/settings.js';
import { BRAIN_ENGINE } from '../src/services/voice/brain/conversation.js';
import { idleVoice } from '../src/services/voice/control.js';
import { loadSocketSecret, socketToken } from '../src/services/voice/brain/socket-url.js';
import { FakeLlm, lastUserText } from '../test/support/fake-llm.js';
import { RetellLlmClient } from '../test/support/retell-llm-client.js';
import { round, startServer, withDatabase } from './support.js';

// The built-in agent's added latency: 50 calls at once, each a Retell-side socket to the production
// server, which streams from a fake OpenAI-compatible LLM sending a token every TOKEN_MS. For each
// response, the time from the fake LLM writing its first token to our first frame of it reaching the
// socket's client (both ends in this process, on one clock). Target: p99 under 50 ms.

const CALLS = Number(process.env.BENCH_BRAIN_CALLS ?? 50);
const TURNS = Number(process.env.BENCH_BRAIN_TURNS ?? 6);
const TOKEN_MS = Number(process.env.BENCH_BRAIN_TOKEN_MS ?? 20);
/** A hosted model's usual wait before its first token; the calls' turns drift apart as real ones do. */
const FIRST_TOKEN_MS = Number(process.env.BENCH_BRAIN_FIRST_TOKEN_MS ?? 300);
const ANSWER = 'Sure, I can help with that. Our next open slot is Thursday at nine in the morning. Shall I book it for you?';

export async function benchBrain() {
  const llm = await new FakeLlm(() => ({ text: ANSWER, firstTokenMs: FIRST_TOKEN_MS, tokenMs: TOKEN_MS })).start();
  try {
    return await withDatabase(async (url) => {
      const { agentId, callIds, secret } = await callsInFlight(url);
      const server = await startServer(url, {
        DIALER: 'off',
        LLM_BASE_URL: `${llm.url}/v1`,
        LLM_MODEL: 'bench-model',
        LOG_LEVEL: 'error',
      });
      try {
        const base = `${server.url.replace(/^http/, 'ws')}/voice/retell/llm/${socketToken(secret, agentId)}`;
        // Every call's socket opens first (Retell opens them as calls start); each call's first turn then
        // warms up, timed by nobody: a long-running server has its code compiled and its connections to
        // the LLM open. The turns after it are measured.
        const clients = await Promise.all(callIds.map((callId) => opened(`${base}/${callId}`)));
        const arrivals = new Map<string, number>();
        // This process's own stalls (the clients and the fake LLM live here) delay arrivals too: shown
        // beside the figures, so that a loaded machine reads as such.
        const loopDelay = monitorEventLoopDelay({ resolution: 5 });
        loopDelay.enable();
        await Promise.all(clients.map((client, call) => converse(client, call, arrivals)));
        loopDelay.disable();
        const firstTokens = new Map([...llm.firstTokenAt].map(([index, at]) => [lastUserText(llm.requests[index]!) as string, at]));
        const delays = [...arrivals].map(([text, at]) => at - firstTokens.get(text)!).sort((a, b) => a - b);
        const pick = (q: number) => round(delays[Math.min(delays.length - 1, Math.floor(q * delays.length))]!, 2);
        return {
          bench: 'brain',
          calls: CALLS,
          responses: delays.length,
          firstTokenMs: FIRST_TOKEN_MS,
          tokenMs: TOKEN_MS,
          firstFrameP50Ms: pick(0.5),
          firstFrameP99Ms: pick(0.99),
          firstFrameMaxMs: round(delays.at(-1)!, 2),
          benchLoopDelayP99Ms: round(loopDelay.percentile(99) / 1e6, 1),
          benchLoopDelayMaxMs: round(loopDelay.max / 1e6, 1),
        };
      } finally {
        await server.stop();
      }
    });
  } finally {
    await llm.close();
  }
}

/** A call's socket, past its begin message. */
async function opened(url: string) {
  const client = await RetellLlmClient.connect(url);
  await client.next((f) => f.response_type === 'response' && f.response_id === 0);
  return client;
}

/** One call's turns, one after another: each measured turn's first content frame is timed by the text that asked for it. */
async function converse(client: RetellLlmClient, call: number, arrivals: Map<string, number>) {
  // Calls do not begin in step: each starts somewhere within one answer's time.
  await new Promise((resolve) => setTimeout(resolve, Math.random() * (FIRST_TOKEN_MS + 25 * TOKEN_MS)));
  const transcript: { role: 'agent' | 'user'; content: string }[] = [];
  for (let turn = 0; turn <= TURNS; turn += 1) {
    const asked = `call ${call} turn ${turn}: do you have a slot this week?`;
    transcript.push({ role: 'user', content: asked });
    const from = client.frames.length;
    const answer = await client.respond(turn + 1, transcript);
    // The callee's reply takes a moment, different each time.
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 400));
    const first = client.frames.findIndex((f, i) => i >= from && f.response_type === 'response' && f.response_id === turn + 1 && f.content);
    if (turn > 0) arrivals.set(asked, client.arrivals[first]!);
    transcript.push({ role: 'agent', content: answer.content });
  }
  await client.close();
}

/** CALLS calls in flight on a campaign whose agent the built-in brain answers. */
async function callsInFlight(url: string) {
  const db = await openDatabase({ kind: 'postgres', url });
  try {
    await db.migrate();
    await seedAgentTemplates(db);
    const log = pino({ level: 'silent' });
    const env: ServiceEnv = {
      db: db.prisma,
      sql: db.sql,
      clock: systemClock,
      log,
      settings: defaultSettings,
      dialer: idleDialer,
      events: inProcessEventBus(log),
      voice: idleVoice,
    };
    const userId = randomUUID();
    await db.prisma.user.create({ data: { id: userId } });
    const ctx = serviceContext(env, { id: userId, isAdmin: false });
    const template = await db.prisma.agentTemplate.findUniqueOrThrow({ where: { templateKey: 'appointment_setter' } });
    const agent = await createAgent(ctx, {
      template_id: template.id,
      name: 'Bench agent',
      phone_number: '+14155550100',
      variables: { agent_name: 'Sam', company_name: 'Acme' },
    });
    await db.prisma.agent.update({ where: { id: agent.id }, data: { responseEngineType: BRAIN_ENGINE } });
    const rows = Array.from({ length: CALLS }, (_, i) => ({ Name: `Person ${i}`, Phone: `+1512${2_000_000 + i}` }));
    const { groupId } = await importContacts(ctx, { group_name: 'Bench', csv_data: rows });
    const campaign = await db.prisma.campaign.create({
      data: { userId, agentId: agent.id, contactGroupId: groupId, name: 'Bench campaign', status: 'running', startedAt: new Date() },
    });
    const contacts = await db.prisma.contact.findMany({ where: { groupId }, select: { id: true, phoneNumber: true } });
    const callIds = contacts.map((_, i) => `bench_call_${i}`);
    await db.prisma.callAttempt.createMany({
      data: contacts.map((contact, i) => ({
        userId,
        campaignId: campaign.id,
        contactId: contact.id,
        attemptNumber: 1,
        status: 'in_progress' as const,
        toNumber: contact.phoneNumber,
        providerCallId: callIds[i]!,
      })),
    });
    return { agentId: agent.id, callIds, secret: await loadSocketSecret(db.sql) };
  } finally {
    await db.close();
  }
}
