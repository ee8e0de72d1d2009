import { lookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPrivateAddress } from './addresses.js';

// One POST to a customer's receiver: the edge we do not own. It never follows a redirect (a 3xx is a
// failed attempt), gives up after the timeout, reads at most 64 KiB of the answer, and, unless private
// addresses are allowed, refuses to connect to one, checked on the address actually dialed.

const MAX_ANSWER_BYTES = 64 * 1024;

export interface SendOutcome {
  /** The receiver's status code; null when there was no answer. */
  statusCode: number | null;
  latencyMs: number;
  /** Why the attempt failed when there was no answer, or it was no 2xx; null on success. */
  error: string | null;
}

export interface SendOptions {
  timeoutMs: number;
  allowPrivateAddresses: boolean;
}

class PrivateAddress extends Error {
  constructor() {
    super('the host resolves to a loopback, private or link-local address');
  }
}

/** A lookup that refuses private addresses, so the check applies to the address connected to. */
const publicLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true } as LookupAllOptions, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    if (addresses.some((a) => isPrivateAddress(a.address))) return callback(new PrivateAddress(), '', 0);
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};

export function send(url: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<SendOutcome> {
  const target = new URL(url);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!options.allowPrivateAddresses && isIP(host) && isPrivateAddress(host)) {
    return Promise.resolve({ statusCode: null, latencyMs: 0, error: new PrivateAddress().message });
  }
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const request = (target.protocol === 'https:' ? https : http).request(target, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'callflow-webhooks/1',
      },
      ...(options.allowPrivateAddresses ? {} : { lookup: publicLookup }),
    });
    const timer = setTimeout(() => {
      request.destroy();
      finish({ statusCode: null, latencyMs: elapsed(), error: `no answer within ${options.timeoutMs} ms` });
    }, options.timeoutMs);
    request.on('error', (error) => finish({ statusCode: null, latencyMs: elapsed(), error: error.message }));
    request.on('response', (response) => {
      const statusCode = response.statusCode ?? 0;
      const error =
        statusCode >= 200 && statusCode < 300
          ? null
          : statusCode >= 300 && statusCode < 400
            ? `answered ${statusCode}; redirects are not followed`
            : `answered ${statusCode}`;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) response.destroy();
      });
      // The answer's status is what counts; its body is read only so the connection can be reused.
      response.on('close', () => finish({ statusCode, latencyMs: elapsed(), error }));
      response.on('error', () => finish({ statusCode, latencyMs: elapsed(), error }));
    });
    request.end(body);
  });
}
