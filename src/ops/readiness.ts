import { withTimeout } from './with-timeout.js';

/** Throws (or rejects) while its part of the service is not ready. The message is shown by /readyz. */
export type ReadinessCheck = () => void | Promise<void>;

export interface CheckResult {
  name: string;
  ok: boolean;
  durationMs: number;
  error?: Error;
}

/**
 * The checks /readyz runs: the database's are registered at start, and other parts (the dialer's job
 * engine) add their own. All run at once, each bounded by a timeout so that a probe never hangs.
 */
export class Readiness {
  readonly #checks = new Map<string, ReadinessCheck>();

  constructor(private readonly timeoutMs = 2_000) {}

  register(name: string, check: ReadinessCheck): void {
    if (this.#checks.has(name)) throw new Error(`A readiness check named "${name}" is already registered.`);
    this.#checks.set(name, check);
  }

  run(): Promise<CheckResult[]> {
    return Promise.all([...this.#checks].map(([name, check]) => this.#runOne(name, check)));
  }

  async #runOne(name: string, check: ReadinessCheck): Promise<CheckResult> {
    const started = performance.now();
    try {
      await withTimeout(check, this.timeoutMs, `no answer within ${this.timeoutMs} ms`);
      return { name, ok: true, durationMs: elapsed(started) };
    } catch (error) {
      return { name, ok: false, durationMs: elapsed(started), error: error instanceof Error ? error : new Error(String(error)) };
    }
  }
}

const elapsed = (started: number) => Math.round((performance.now() - started) * 10) / 10;
