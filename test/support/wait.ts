/**
 * Polls `probe` until it returns something other than undefined. Tests wait on conditions with generous
 * limits rather than sleeping for a guessed time, so a loaded machine makes them slower, not flaky.
 */
export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what = 'a condition'): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
