import { AppError } from "@/lib/errors";

/**
 * A turn's deadlines (DESIGN §16): a request the model has not begun answering `firstTokenMs`
 * after it was sent, no chunk from a model that has begun for `idleMs`, or the model call running
 * past `maxMs`, aborts it — a provider that hangs must not hold the chat open, while a local
 * server that loads the model or reads a long prompt before its first token is given the time it
 * takes. `touch(awaiting)` on every chunk, `awaiting` when a request was just sent (a step
 * starts, or the attempt does); `failure()` afterwards says which deadline fired, as the error
 * the user sees.
 */
export type TurnDeadline = {
  signal: AbortSignal;
  touch: (awaiting?: boolean) => void;
  failure: () => AppError | null;
  dispose: () => void;
};

const upToOneDecimal = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });

/**
 * A deadline as the user reads it: "800 ms", "1.5 s", "60 s", "5 min" (TURN_*_MS may be set
 * below a second, where whole seconds would say "0 s").
 */
export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${upToOneDecimal.format(ms / 1_000)} s`;
  return `${upToOneDecimal.format(ms / 60_000)} min`;
}

export function turnDeadline(options: {
  idleMs: number;
  firstTokenMs: number;
  maxMs: number;
}): TurnDeadline {
  const controller = new AbortController();
  let failure: AppError | null = null;
  const fire = (error: AppError) => {
    if (controller.signal.aborted) return;
    failure = error;
    controller.abort(error);
  };
  const idle = () =>
    fire(
      new AppError(
        "unavailable:model_timeout",
        `The model stopped responding (nothing for ${duration(options.idleMs)}). Retry, or pick another model.`,
      ),
    );
  const unanswered = () =>
    fire(
      new AppError(
        "unavailable:model_timeout",
        `The model did not begin answering within ${duration(options.firstTokenMs)}. It may still be loading, or reading a very long prompt: retry in a moment, or pick another model.`,
      ),
    );
  const arm = (awaiting: boolean) =>
    awaiting ? setTimeout(unanswered, options.firstTokenMs) : setTimeout(idle, options.idleMs);
  let idleTimer = arm(true);
  const maxTimer = setTimeout(
    () =>
      fire(
        new AppError(
          "unavailable:model_timeout",
          `The reply took longer than ${duration(options.maxMs)} and was stopped. Retry, or ask for less at once.`,
        ),
      ),
    options.maxMs,
  );
  return {
    signal: controller.signal,
    touch: (awaiting = false) => {
      clearTimeout(idleTimer);
      idleTimer = arm(awaiting);
    },
    failure: () => failure,
    dispose: () => {
      clearTimeout(idleTimer);
      clearTimeout(maxTimer);
    },
  };
}
