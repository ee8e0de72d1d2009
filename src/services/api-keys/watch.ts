import type { Logger } from 'pino';
import type { Sql } from '../../db/sql.js';
import type { Clock } from '../context.js';
import { keysStillHolding } from './api-keys.js';

/**
 * How often what a key keeps open (a subscription) asks whether the key still holds: the longest it goes
 * on after the key is revoked or expires, on every instance, without a message between them.
 */
export const KEY_RECHECK_MS = 5_000;

/**
 * The API keys that open subscriptions of this process stand on. Every KEY_RECHECK_MS one statement asks
 * which of them still hold, however many subscriptions there are; those of a key that no longer holds are
 * told so, once. The timer runs only while something is watched.
 */
export class KeyWatch {
  readonly #watchers = new Map<string, Set<() => void>>();
  #timer: NodeJS.Timeout | undefined;
  #checking = false;

  constructor(private readonly env: { sql: Sql; clock: Clock; log: Logger }) {}

  /** Calls `ended` once the key no longer holds; returns the function that stops watching. */
  watch(keyId: string, ended: () => void): () => void {
    const watchers = this.#watchers.get(keyId) ?? new Set();
    this.#watchers.set(keyId, watchers.add(ended));
    this.#timer ??= setInterval(() => void this.#check(), KEY_RECHECK_MS).unref();
    return () => this.#forget(keyId, ended);
  }

  #forget(keyId: string, ended: () => void): void {
    const watchers = this.#watchers.get(keyId);
    if (!watchers?.delete(ended) || watchers.size > 0) return;
    this.#watchers.delete(keyId);
    if (this.#watchers.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  async #check(): Promise<void> {
    // A slow database must not pile up checks; the next tick asks again.
    if (this.#checking || this.#watchers.size === 0) return;
    this.#checking = true;
    try {
      const holding = await keysStillHolding(this.env.sql, [...this.#watchers.keys()], this.env.clock.now());
      for (const [keyId, watchers] of this.#watchers) {
        if (holding.has(keyId)) continue;
        for (const ended of watchers) {
          this.#forget(keyId, ended);
          ended();
        }
      }
    } catch (err) {
      // What it keeps open goes on until a check succeeds: a database outage does not end every stream.
      this.env.log.warn({ err }, 'checking whether API keys still hold failed');
    } finally {
      this.#checking = false;
    }
  }
}
