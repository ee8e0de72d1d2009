import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SqlSession } from '../../../db/sql.js';
import { signingSecret } from '../store.js';

// Retell does not sign the socket it opens to an LLM server, so the URL we give it is the credential:
// `wss://<public host>/voice/retell/llm/<token>`, to which Retell adds `/<call_id>`. The token is an
// HMAC of the agent's id under a secret kept in the database, so a socket is accepted only for a call
// whose agent the token was made for: a leaked URL opens nothing for another agent's calls.

export const BRAIN_SOCKET_PATH = '/voice/retell/llm';

const SECRET_NAME = 'brain-socket';

export const loadSocketSecret = (sql: SqlSession) => signingSecret(sql, SECRET_NAME, randomBytes(32));

export function socketToken(secret: Buffer, agentId: string): string {
  return createHmac('sha256', secret).update(`agent:${agentId}`).digest('base64url');
}

export function tokenMatches(secret: Buffer, agentId: string, token: string): boolean {
  const expected = Buffer.from(socketToken(secret, agentId));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The `llm_websocket_url` Retell is given for an agent answered by the built-in brain. */
export function brainSocketUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/^http/, 'ws')}${BRAIN_SOCKET_PATH}/${token}`;
}
