import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ServiceEnv } from '../services/context.js';
import { isUnfinished } from '../services/call-outcomes.js';
import { BRAIN_ENGINE, Conversation, type BrainDeps } from '../services/voice/brain/conversation.js';
import { callForSocket } from '../services/voice/brain/calls.js';
import { BRAIN_SOCKET_PATH, loadSocketSecret, tokenMatches } from '../services/voice/brain/socket-url.js';

export interface BrainSocketDeps extends ServiceEnv {
  /** The LLM and tools; unset (no LLM_BASE_URL), every socket is refused with 503. */
  brain: Omit<BrainDeps, keyof ServiceEnv> | undefined;
  /** Largest frame Retell may send (a long call's transcript comes whole in each). */
  maxFrameBytes: number;
}

export interface BrainSockets {
  /** Closes every open socket with 1001 (going away), so that Retell reconnects to another instance. */
  close(): void;
}

const PATH = new RegExp(`^${BRAIN_SOCKET_PATH}/([A-Za-z0-9_-]{1,64})/([A-Za-z0-9_-]{1,128})$`);

/**
 * Serves Retell's LLM WebSocket at /voice/retell/llm/<token>/<call_id> on `server`. The upgrade is
 * refused with an HTTP answer before any socket opens: 404 for a path, token or call that is not ours
 * (a stranger learns nothing), 409 for a call that is over or whose agent is not answered here, 503
 * without an LLM configured or with the database unreachable.
 */
export function serveBrainSockets(server: Server, deps: BrainSocketDeps): BrainSockets {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: deps.maxFrameBytes });
  let secret: Promise<Buffer> | undefined;
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    accept(request, socket, head).catch((error: unknown) => {
      secret = undefined;
      deps.log.error({ err: error }, 'brain: socket refused, the database could not be read');
      refuse(socket, 503, 'The service cannot take the call now.');
    });
  });

  async function accept(request: IncomingMessage, socket: Duplex, head: Buffer) {
    const match = PATH.exec(new URL(request.url ?? '/', 'http://socket').pathname);
    if (!match) return refuse(socket, 404, 'Not found.');
    if (!deps.brain) return refuse(socket, 503, 'The built-in agent is not configured (LLM_BASE_URL).');
    const [, token, providerCallId] = match as unknown as [string, string, string];
    const call = await callForSocket(deps.sql, providerCallId);
    if (!call || !tokenMatches(await (secret ??= loadSocketSecret(deps.sql)), call.agentId, token))
      return refuse(socket, 404, 'Not found.');
    if (call.responseEngineType !== BRAIN_ENGINE) return refuse(socket, 409, "The call's agent is not answered by the built-in agent.");
    if (!isUnfinished(call.status) || call.ended) return refuse(socket, 409, 'The call is over.');
    const log = deps.log.child({ providerCallId, attemptId: call.id });
    const brain = deps.brain;
    sockets.handleUpgrade(request, socket, head, (ws: WebSocket) => {
      const conversation = new Conversation({ ...deps, ...brain, log }, call, providerCallId, (frame) => {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
      });
      ws.on('message', (data, isBinary) => {
        if (isBinary) return log.warn('brain: refused a binary frame');
        conversation.receive(Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8'));
      });
      ws.on('error', (error) => log.warn({ err: error }, 'brain: socket error'));
      ws.on('close', () => void conversation.close());
      log.info('brain: socket open');
      conversation.start();
    });
  }

  return {
    close() {
      for (const ws of sockets.clients) ws.close(1001, 'server shutting down');
    },
  };
}

function refuse(socket: Duplex, status: number, detail: string): void {
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
