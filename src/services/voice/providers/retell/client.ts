import Retell, { APIConnectionError, APIError } from 'retell-sdk';
import { ProviderError } from '../../provider.js';

// One way to reach Retell's API, for provisioning and for placing calls: the official SDK pointed at
// RETELL_BASE_URL (a stand-in speaking the same protocol in tests).

export interface RetellClientOptions {
  /** https://api.retellai.com, or a stand-in speaking the same protocol. */
  baseUrl: string;
  apiKey: string;
  /** How long one request may take. */
  timeoutSeconds: number;
}

/**
 * The SDK retries nothing itself: whoever asks owns retrying (the provisioning job with its backoff, the
 * dialer's put-back of a refused call), so one failure is never retried at two levels.
 */
export function retellClient(options: RetellClientOptions): Retell {
  return new Retell({ apiKey: options.apiKey, baseURL: options.baseUrl, timeout: options.timeoutSeconds * 1000, maxRetries: 0 });
}

/** Retell's error as ours: rate limits, conflicts, its 5xx, timeouts and network errors are worth another try. */
export function providerError(error: unknown, asked: string): ProviderError {
  if (error instanceof APIConnectionError) return new ProviderError(`Retell did not answer ${asked}: ${error.message}`, true);
  if (error instanceof APIError) {
    const status = error.status ?? 0;
    const transient = status === 408 || status === 409 || status === 429 || status >= 500;
    return new ProviderError(`Retell answered ${status} to ${asked}: ${messageOf(error)}`, transient);
  }
  return new ProviderError(`${asked} failed: ${(error as Error).message}`, true);
}

/** Retell's own message (`{ "message": ... }` in its error bodies), else the SDK's. */
export function messageOf(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  return typeof body?.message === 'string' ? body.message : error.message;
}

export const isNotFound = (error: unknown) => error instanceof APIError && error.status === 404;
