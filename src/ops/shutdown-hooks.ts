import type { Logger } from 'pino';
import { withTimeout } from './with-timeout.js';

export type ShutdownHook = () => void | Promise<void>;

/**
 * Work to finish when the process stops, after HTTP has drained and before the database closes: the
 * dialer hands its unfinished jobs back to the job engine here. Hooks run one at a time, the last added
 * first (it may depend on those added before it), each bounded by the shutdown timeout; one that fails
 * or times out is logged and does not keep the others from running.
 */
export class ShutdownHooks {
  readonly #hooks: { name: string; hook: ShutdownHook }[] = [];

  add(name: string, hook: ShutdownHook): void {
    this.#hooks.push({ name, hook });
  }

  /** Resolves true when every hook finished in time. */
  async run(log: Logger, timeoutMs: number): Promise<boolean> {
    let clean = true;
    for (const { name, hook } of [...this.#hooks].reverse()) {
      try {
        await withTimeout(hook, timeoutMs, `did not finish within ${timeoutMs} ms`);
        log.info({ hook: name }, 'shutdown hook finished');
      } catch (err) {
        clean = false;
        log.error({ err, hook: name }, 'shutdown hook failed');
      }
    }
    return clean;
  }
}
