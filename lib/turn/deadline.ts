import { AppError } from "@/lib/errors";

/**
 * A turn's deadlines (DESIGN §16): no chunk from the model for `idleMs`, or
 * the model call running past `maxMs`, aborts it — a provider that hangs must
 * not hold the chat open. `touch()` on every chunk; `failure()` afterwards
 * says which deadline fired, as the error the user sees.
 */
export type TurnDeadline = {
  signal: AbortSignal;
  touch: () => void;
  failure: () => AppError | null;
  dispose: () => void;
};

export function turnDeadline(options: { idleMs: number; maxMs: number }): TurnDeadline {
  const controller = new AbortController();
  let failure: AppError | null = null;
  const fire = (error: AppError) => {
    if (controller.signal.aborted) return;
    failure = error;
    controller.abort(error);
  };
  const seconds = (ms: number) => Math.round(ms / 1000).toLocaleString("en-US");
  const idle = () =>
    fire(
      new AppError(
        "unavailable:model_timeout",
        `The model stopped responding (nothing for ${seconds(options.idleMs)} s). Retry, or pick another model.`,
      ),
    );
  let idleTimer = setTimeout(idle, options.idleMs);
  const maxTimer = setTimeout(
    () =>
      fire(
        new AppError(
          "unavailable:model_timeout",
          `The reply took longer than ${seconds(options.maxMs)} s and was stopped. Retry, or ask for less at once.`,
        ),
      ),
    options.maxMs,
  );
  return {
    signal: controller.signal,
    touch: () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(idle, options.idleMs);
    },
    failure: () => failure,
    dispose: () => {
      clearTimeout(idleTimer);
      clearTimeout(maxTimer);
    },
  };
}
