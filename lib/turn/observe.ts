import type { LanguageModelUsage, TextStreamPart, ToolSet } from "ai";
import type { ClassTokens } from "@/lib/context/content-class";
import type { Truncation } from "@/lib/context/truncation";
import type { StoppedFor } from "@/lib/message/stats";

/** What Fold learns about a turn while its stream passes by (for stats and persistence). */
export type TurnObservations = {
  firstTokenAt: number | null;
  /**
   * How long the model spent writing its steps, each from its first token to its end: tool runs
   * and the waits for each next step's first token are not in it (a reply's speed).
   */
  writingMs: number;
  /**
   * The step being written: when it began writing (its first token) and when the model last
   * wrote in it; null between steps. A step's tools run after its last output and before its
   * end, so its writing ends at that output.
   */
  stepWriting: { since: number; last: number } | null;
  lastStepUsage: LanguageModelUsage | undefined;
  /** Input tokens of the first step: the provider's count of exactly the prompt Fold estimated. */
  firstStepInputTokens: number | undefined;
  /**
   * Set when recovery trimmed the first request: the provider's count of the
   * rejected (estimated) prompt, or null when it did not say. The trimmed
   * retry's usage then says nothing about Fold's estimate.
   */
  firstStepRecovered?: { reportedTokens: number | null };
  /** What an earlier attempt of this reply used (a window-cut retry's first): its stats count it too. */
  earlierUsage?: LanguageModelUsage;
  /** Fold's estimate of a window-cut retry's request, trimmed in memory: a stopped retry's input. */
  retryEstimatedTokens?: number;
  /** Tier 2 or recovery trimmed a request in memory: the usage describes a view that will not exist again. */
  trimmedInMemory?: boolean;
  steps: number;
  /**
   * Fold ended the reply between two steps, not the user: why (today's tokens ran out, or they
   * could not be read).
   */
  stoppedFor?: StoppedFor;
  finished: boolean;
  /** The finish reason of the whole turn (the last step's). */
  finishReason?: string;
  error: unknown;
  /** Tool call id → milliseconds from the call to its result. */
  toolDurationsMs: Record<string, number>;
  /** Fold's estimate of the first request, raw and calibrated (to learn from the real count). */
  estimate?: {
    estimatedRawTokens: number;
    estimatedRawClasses: ClassTokens;
    /** Of the raw tokens, the request's frame: instructions and tool schemas. */
    estimatedFrameTokens: number;
    estimatedTokens: number;
  };
  /** The server cut the first request silently: its count says nothing about the tokenizer. */
  truncation?: Truncation;
  /** The model call was aborted (a deadline or a stop). */
  aborted?: boolean;
  /** The user stopped the reply: what was written so far is stored, marked as stopped. */
  stopped?: boolean;
  /** The stop came before the model call (while Tier 1 compacted): there is no reply at all. */
  stoppedBeforeModel?: boolean;
  /** The turn failed before its model call (Tier 1 refused the message, or could not run). */
  failedBeforeModel?: boolean;
  /** The new message, stored beside the model call (PreparedTurn), could not be stored. */
  unstored?: boolean;
  /** The chat's lease ran out under the turn and may be another's now: nothing is stored. */
  leaseLost?: boolean;
  /**
   * The reply should have been stored and was not (storing it failed, or the lease was lost):
   * what the browser is told in place of the reply's end, which would say it was stored.
   */
  unsaved?: string;
  /** The reply's text and its reasoning as streamed, for a stopped reply's output estimate. */
  streamedText?: string;
  streamedReasoning?: string;
  /**
   * The model's trigger and what the next turn is expected to add, once the turn knows its model
   * (worked out after the reply, off the path to the first token).
   */
  nextTurn?: { trigger: number; nextMessageTokens: () => number };
};

const FIRST_TOKEN_PARTS = new Set([
  "text-delta",
  "reasoning-delta",
  "tool-input-start",
  "tool-call",
]);

/**
 * Whether the turn's message goes back to the day: nothing answered it. It failed or was stopped
 * before its model call (while Tier 1 folded), its message was not stored, or the model wrote
 * nothing and no reply is stored because the provider refused, failed or never answered (retries
 * included) or the chat was taken over (a lease lost under the turn). A reply the user stopped
 * is theirs to keep.
 */
export function answeredNothing(observed: TurnObservations, replyStored: boolean): boolean {
  if (observed.failedBeforeModel || observed.unstored || observed.stoppedBeforeModel) return true;
  if (replyStored || observed.firstTokenAt !== null || observed.steps !== 0) return false;
  return observed.leaseLost === true || (observed.error !== undefined && !observed.stopped);
}

/** What the model writes: a step's writing lasts from the first of these to the last. */
const OUTPUT_PARTS = new Set([
  ...FIRST_TOKEN_PARTS,
  "text-start",
  "text-end",
  "reasoning-start",
  "reasoning-end",
  "tool-input-delta",
  "tool-input-end",
]);

/** How long the model has written so far, a step it was writing when stopped included. */
export function writingMsAt(track: TurnObservations): number {
  const step = track.stepWriting;
  return track.writingMs + (step === null ? 0 : Math.max(0, step.last - step.since));
}

export function noObservations(): TurnObservations {
  return {
    firstTokenAt: null,
    writingMs: 0,
    stepWriting: null,
    lastStepUsage: undefined,
    firstStepInputTokens: undefined,
    steps: 0,
    finished: false,
    error: undefined,
    toolDurationsMs: {},
  };
}

/** Passes the stream through unchanged, noting first-token time, steps, usage and errors. */
export function observeTurn<TOOLS extends ToolSet>(
  stream: ReadableStream<TextStreamPart<TOOLS>>,
  now: () => number = Date.now,
  track: TurnObservations = noObservations(),
): { stream: ReadableStream<TextStreamPart<TOOLS>>; track: TurnObservations } {
  const toolStartedAt = new Map<string, number>();
  const tracked = stream.pipeThrough(
    new TransformStream<TextStreamPart<TOOLS>, TextStreamPart<TOOLS>>({
      transform(part, controller) {
        if (OUTPUT_PARTS.has(part.type)) {
          const at = now();
          if (track.firstTokenAt === null && FIRST_TOKEN_PARTS.has(part.type)) {
            track.firstTokenAt = at;
          }
          if (track.stepWriting) track.stepWriting.last = at;
          else if (FIRST_TOKEN_PARTS.has(part.type)) track.stepWriting = { since: at, last: at };
        }
        // A step's writing is counted at its end, or at an error (a retry's step writes anew).
        if ((part.type === "finish-step" || part.type === "error") && track.stepWriting) {
          track.writingMs = writingMsAt(track);
          track.stepWriting = null;
        }
        if (part.type === "finish-step") {
          track.steps += 1;
          track.lastStepUsage = part.usage;
          track.firstStepInputTokens ??= part.usage.inputTokens;
        }
        if (part.type === "tool-call") toolStartedAt.set(part.toolCallId, now());
        if (part.type === "tool-result" || part.type === "tool-error") {
          const started = toolStartedAt.get(part.toolCallId);
          // Never below zero, should the clock step back meanwhile.
          if (started !== undefined)
            track.toolDurationsMs[part.toolCallId] = Math.max(0, now() - started);
        }
        if (part.type === "finish") {
          track.finished = true;
          track.finishReason = part.finishReason;
        }
        if (part.type === "error") track.error ??= part.error;
        // An abort is a deadline (an error the turn reports) or a stop (a stored, stopped reply).
        if (part.type === "abort") track.aborted = true;
        controller.enqueue(part);
      },
    }),
  );
  return { stream: tracked, track };
}
