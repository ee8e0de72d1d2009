import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks (https://www.standardwebhooks.com): a secret is `whsec_` and the base64 of its key;
// a delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`, a list of
// `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` separated by spaces, one per secret that signs.

const PREFIX = 'whsec_';

/** A new secret: 24 random bytes, as the specification suggests (between 24 and 64). */
export function newSecret(): string {
  return `${PREFIX}${randomBytes(24).toString('base64')}`;
}

function signature(secret: string, content: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
}

/** The headers that sign `body`, by every secret given (a rotation's new and old secret). */
export function signatureHeaders(id: string, at: Date, body: string, secrets: string[]): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const content = `${id}.${timestamp}.${body}`;
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': secrets.map((secret) => signature(secret, content)).join(' '),
  };
}
