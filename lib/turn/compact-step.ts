import type { UIMessageChunk } from "ai";
import { backgroundCompactionDone, loadCompactionInput } from "@/lib/chat/background-compact";
import type { ModelBudget } from "@/lib/chat/budget";
import {
  type CompactDeps,
  type CompactOutcome,
  compactChat,
  projectChat,
} from "@/lib/chat/compact";
import { type TraceInput, traceEndChunk, traceStartChunk } from "@/lib/compaction/trace";
import type { ClassTokens } from "@/lib/context/content-class";
import { defaultEstimator } from "@/lib/context/tokens";
import { isCompacting } from "@/lib/db/queries/chats";
import type { Chat } from "@/lib/db/schema";
import { AppError } from "@/lib/errors";
import { isPinnedByUser } from "@/lib/message/pins";
import type { FoldUIMessage } from "@/lib/message/ui-message";

/**
 * Step 4 of a turn: Tier 1. Compacts the chat if it must, showing the
 * `compact_context` trace in the turn's stream while the summarizer runs, and
 * refuses the turn before any provider call when the latest message alone
 * cannot fit. Stop ends it at once: the summarizer's request is aborted, the
 * trace says so, nothing is written to the chat, and the result is null.
 */
export async function compactForTurn(
  deps: CompactDeps,
  turn: {
    chat: Chat;
    history: FoldUIMessage[];
    positions?: ReadonlyMap<string, number>;
    model: ModelBudget;
    overheadTokens: number;
    overheadClasses?: ClassTokens;
    traceId: string;
    /** The turn's new message, still being stored (PreparedTurn). */
    stored?: Promise<void>;
    /** Aborts when the user stops the turn (from any instance). */
    stopSignal?: AbortSignal;
  },
  write: (chunk: UIMessageChunk) => void,
): Promise<CompactOutcome | null> {
  const now = deps.now ?? Date.now;
  const signal = turn.stopSignal;
  let started: TraceInput | undefined;
  let outcome: CompactOutcome;
  try {
    const { input, deferFold } = await besideBackgroundCompaction(deps, turn);
    if (signal?.aborted) return null;
    outcome = await compactChat(deps, {
      ...input,
      model: turn.model,
      overheadTokens: turn.overheadTokens,
      overheadClasses: turn.overheadClasses,
      deferFold,
      stored: turn.stored,
      signal,
      onSummarizeStart: ({ tokensBefore, messages, reason }) => {
        started = { reason, tokensBefore, messages, startedAt: now() };
        write(traceStartChunk(turn.traceId, started));
      },
    });
  } catch (error) {
    if (!signal?.aborted) throw error;
    if (started) write(traceEndChunk(turn.traceId, stoppedTrace(started, now())));
    return null;
  }
  if (outcome.trace) {
    if (!started) {
      const { reason, tokensBefore } = outcome.trace;
      write(traceStartChunk(turn.traceId, { reason, tokensBefore, messages: 0, startedAt: now() }));
    }
    write(traceEndChunk(turn.traceId, outcome.trace));
  }
  if (!outcome.fits) throw tooLong(turn);
  return outcome;
}

/**
 * A background compaction of this chat is running (it started after the last
 * reply, on any instance): the turn goes ahead with the current view when that
 * fits, folding nothing itself; only when it would not fit does it wait for
 * the compaction's lease and read the chat again.
 */
async function besideBackgroundCompaction(
  deps: CompactDeps,
  turn: Parameters<typeof compactForTurn>[1],
) {
  const current = {
    chat: turn.chat,
    history: turn.history,
    positions: turn.positions,
  };
  if (!isCompacting(turn.chat)) return { input: current, deferFold: false };
  if (projectChat(turn).projectedTokens <= turn.model.budget.inputBudget)
    return { input: current, deferFold: true };
  await backgroundCompactionDone(deps.db, turn.chat.id, turn.stopSignal);
  if (turn.stopSignal?.aborted) return { input: current, deferFold: false };
  // Read again, the chat must hold the turn's message.
  await turn.stored;
  return { input: (await loadCompactionInput(deps, turn.chat.id)) ?? current, deferFold: false };
}

/** The trace of a compaction the user stopped while the summarizer ran: the chat is as it was. */
function stoppedTrace(started: TraceInput, endedAt: number) {
  return {
    outcome: "stopped" as const,
    reason: started.reason,
    tokensBefore: started.tokensBefore,
    tokensAfter: started.tokensBefore,
    savedPct: 0,
    messagesSummarized: 0,
    summarizerModel: null,
    durationMs: endedAt - started.startedAt,
    summary: null,
    note: null,
  };
}

/**
 * A new message that cannot fit on its own, beside only the request's instructions and tools,
 * whatever is folded or cut: refused before it is stored (a 400 puts its text back in the box),
 * where Tier 1 would store it and then refuse every Retry of it.
 */
export function assertFitsAlone(
  message: FoldUIMessage,
  model: ModelBudget,
  overheadTokens: number,
): void {
  const size = sizeOf(message, model, overheadTokens);
  if (!size.fitsAlone) throw tooLongAlone(size);
}

/** A message's estimate against the model's room, as Tier 1 counts both. */
function sizeOf(message: FoldUIMessage | undefined, model: ModelBudget, overheadTokens: number) {
  const { modelId, window, budget, classRatios, ratio } = model;
  const tokens = message
    ? defaultEstimator.estimateUIMessages([message], { ratio: classRatios })
    : 0;
  const overhead = Math.ceil(overheadTokens * ratio);
  return {
    tokens,
    overhead,
    fitsAlone: tokens + overhead <= budget.inputBudget,
    room: `${modelId}'s context window is ${n(window.contextWindow)} tokens, of which ${n(budget.inputBudget)} can hold the conversation`,
  };
}

const n = (value: number) => value.toLocaleString("en-US");

function tooLongAlone({ tokens, room }: { tokens: number; room: string }): AppError {
  return new AppError(
    "bad_request:too_long",
    `Your message (about ${n(tokens)} tokens) is too long on its own: ${room}. Shorten it, or pick a model with a larger window.`,
  );
}

/**
 * The one refusal Tier 1 makes: what is never cut does not fit — the latest user message, the
 * messages the user pinned, the summary and the messages kept verbatim until the next fold.
 * Says which: the pinned messages when the message would fit without them, else the summary
 * and the kept messages when it would fit alone, else the message itself (a new message is
 * refused so before it is stored, assertFitsAlone; one stored earlier, on a model with a larger
 * window, is answered only once edited shorter or sent to such a model again).
 */
function tooLong(turn: {
  history: FoldUIMessage[];
  model: ModelBudget;
  overheadTokens: number;
}): AppError {
  const latest = turn.history.findLast((m) => m.role === "user");
  const size = sizeOf(latest, turn.model, turn.overheadTokens);
  if (!size.fitsAlone) return tooLongAlone(size);
  const { tokens, overhead, room } = size;
  // The messages the user has pinned (one unpinned but not folded yet is not theirs to unpin).
  const pinned = turn.history.filter((m) => isPinnedByUser(m.metadata) && m.id !== latest?.id);
  const pinnedTokens =
    pinned.length > 0
      ? defaultEstimator.estimateUIMessages(pinned, { ratio: turn.model.classRatios })
      : 0;
  if (tokens + overhead + pinnedTokens > turn.model.budget.inputBudget) {
    const what =
      pinned.length === 1 ? "the pinned message" : `the ${pinned.length} pinned messages`;
    return new AppError(
      "bad_request:too_long",
      `Your message (about ${n(tokens)} tokens) does not fit beside ${what} (about ${n(pinnedTokens)} tokens): ${room}. Unpin some (each message's pin, or Unpin all in Memory): pinned messages are never shortened or folded. Or pick a model with a larger window.`,
    );
  }
  // What else is never cut took the room: the summary, messages unpinned but not folded yet.
  return new AppError(
    "bad_request:too_long",
    `Your message (about ${n(tokens)} tokens) does not fit beside what this chat keeps whole — its summary and the messages kept verbatim until the next compaction: ${room}. Compact now, or pick a model with a larger window.`,
  );
}
