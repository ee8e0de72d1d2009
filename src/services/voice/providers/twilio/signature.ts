import { createHmac, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '../../../errors.js';

// Twilio's request signature, `X-Twilio-Signature`: base64 of HMAC-SHA1, keyed with the account's auth
// token, over the full URL Twilio requested (scheme, host, path and query) followed by every POST
// parameter's name and value, the parameters sorted by name. Our URL is the one we gave Twilio, so it
// is rebuilt from PUBLIC_BASE_URL rather than from the Host a proxy passed on.

/** One form parameter, decoded; a name may repeat. */
export type FormParam = readonly [name: string, value: string];

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** The signature Twilio sends for a POST of `params` to `url`. */
export function twilioSignature(authToken: string, url: string, params: readonly FormParam[]): string {
  // Sorted by name in byte order; values of a repeated name in byte order too, as Twilio's libraries do.
  const sorted = [...params].sort((a, b) => byteOrder(a[0], b[0]) || byteOrder(a[1], b[1]));
  const hmac = createHmac('sha1', authToken).update(url, 'utf8');
  for (const [name, value] of sorted) hmac.update(name, 'utf8').update(value, 'utf8');
  return hmac.digest('base64');
}

/** 20 bytes of SHA-1 in base64. */
const SIGNATURE = /^[A-Za-z0-9+/]{27}=$/;

/** Throws a ValidationError on `x-twilio-signature` unless `signature` is Twilio's for this request. */
export function verifyTwilioSignature(authToken: string, url: string, params: readonly FormParam[], signature: string | undefined): void {
  const given = signature?.trim() ?? '';
  if (!SIGNATURE.test(given)) throw ValidationError.field('x-twilio-signature', 'Missing or malformed signature.');
  const expected = Buffer.from(twilioSignature(authToken, url, params), 'base64');
  if (!timingSafeEqual(expected, Buffer.from(given, 'base64'))) {
    throw ValidationError.field('x-twilio-signature', 'Signature does not match the URL and parameters.');
  }
}
