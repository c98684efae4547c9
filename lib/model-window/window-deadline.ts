/** The outcome of a task raced against its deadline. */
export type DeadlineResult<T> = { timedOut: false; value: T } | { timedOut: true };

/**
 * Runs `task` with a signal that aborts after `ms`, and stops waiting then even when the
 * task ignores its signal: a hung server must never hold a turn past its deadline.
 * A task that fails before the deadline rejects as usual.
 */
export async function withDeadline<T>(
  ms: number,
  task: (signal: AbortSignal) => Promise<T>,
): Promise<DeadlineResult<T>> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<DeadlineResult<T>>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`timed out after ${ms} ms`));
      resolve({ timedOut: true });
    }, ms);
  });
  try {
    const run = task(controller.signal).then(
      (value): DeadlineResult<T> => ({
        timedOut: false,
        value,
      }),
    );
    return await Promise.race([run, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
