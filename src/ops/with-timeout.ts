/** Settles as `work` does, or rejects with `message` once `ms` have passed. */
export async function withTimeout<T>(work: () => T | Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    // Through a promise, so that a synchronous throw is a rejection too.
    return await Promise.race([Promise.resolve().then(work), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
