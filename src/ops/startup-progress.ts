// A start on a busy machine can take many seconds, and one that says nothing looks hung. Each step of a
// start runs through a Progress, which prints what the step is doing once it has taken longer than a
// second (STARTUP_PROGRESS_AFTER_MS): a quick start prints nothing more than its banner. A step that
// holds the thread the whole time (no I/O to wait for) cannot be interrupted to say so.

/** Runs one step of a start: `doing` says what it does, in a few words. */
export type Progress = <T>(doing: string, work: () => Promise<T>) => Promise<T>;

/** Prints `doing…` through `print` when a step takes longer than `afterMs`; at 0, as each step begins. */
export function startupProgress(print: (line: string) => void, afterMs: number): Progress {
  return async (doing, work) => {
    const say = () => print(`${doing}…`);
    let timer: NodeJS.Timeout | undefined;
    if (afterMs === 0) say();
    else timer = setTimeout(say, afterMs);
    try {
      return await work();
    } finally {
      clearTimeout(timer);
    }
  };
}

/** Says nothing: tests and tools that start the runtime themselves. */
export const silentProgress: Progress = (_doing, work) => work();
