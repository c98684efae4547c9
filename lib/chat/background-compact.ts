import { setTimeout as sleep } from "node:timers/promises";
import { generateId, JsonToSseTransformStream, type ToolSet, type UIMessageChunk } from "ai";
import { chatRequestFrame } from "@/lib/ai/request-frame";
import {
  isFoldedOutcome,
  type TraceInput,
  type TraceOutput,
  traceEndChunk,
  traceEntry,
  traceStartChunk,
} from "@/lib/compaction/trace";
import { defaultEstimator } from "@/lib/context/tokens";
import type { Db } from "@/lib/db/client";
import { getChat, isCompacting } from "@/lib/db/queries/chats";
import { holdsChatStart, loadTurnHistory, positionsOf } from "@/lib/db/queries/messages";
import { statusOf } from "@/lib/db/queries/users";
import type { Chat } from "@/lib/db/schema";
import { env } from "@/lib/env";
import type { LiveBus } from "@/lib/live/bus";
import { listenForStop } from "@/lib/live/stop";
import { endTurnStream, publishTurnStream } from "@/lib/live/streams";
import { log, metric } from "@/lib/log";
import { type FoldUIMessage, rowToUIMessage } from "@/lib/message/ui-message";
import { modelBudget } from "./budget";
import { type CompactDeps, compactChat, projectChat, stateOf } from "./compact";
import { type HeldLease, LEASE_MS, tryHoldCompactionLease } from "./lease";

/**
 * Compaction off the critical path (DESIGN §16): right after a reply is
 * stored, when the next turn's projection — with as much added as the chat's
 * recent turns added (nextMessageTokens) — crosses the trigger, the chat is folded at once, so the
 * next turn finds the summary already written instead of waiting for the
 * summarizer.
 *
 * It runs under the chat's compaction lease (one per chat across instances),
 * apart from the turn's lease: a turn that arrives meanwhile goes ahead when
 * its view fits and waits for the lease only when it does not
 * (compact-step.ts). It commits through the one CAS writer, which refuses it
 * if a turn, compact-now or an edit changed the compaction state or the
 * history version since it read them. While it runs, its `compact_context`
 * trace streams live (GET /api/chats/:id/compaction, from any instance); what
 * it folded stays in the timeline as a trace entry.
 */

export type BackgroundDeps = CompactDeps & {
  live: LiveBus;
  /** Whether the chat's owner has tokens left today: a summarizer pass is charged to them. */
  tokensLeft?: () => Promise<boolean>;
};

/**
 * What the turn that just ended knows of the next one's size: the provider's count of its
 * last request plus the reply (the stored view, counted for real), and what the next turn is
 * expected to add (nextMessageTokens).
 */
export type NextTurnSize = { contextTokens: number; nextMessageTokens: number; trigger: number };

/** Recent turns whose new messages say what the next turn will add. */
const RECENT_TURNS = 5;

/**
 * What the next turn adds before its model call, expected from what the chat's recent turns
 * added: the user messages each stored before its reply, their median over the last few turns.
 * One long paste does not make every next message long, and a turn that only went on (a
 * `continue`: the next step of an agent driving the chat) added nothing: expecting the next
 * message as long as the user's last folded such chats after every reply, each fold a
 * summarizer call. A next turn that adds more than expected is folded by its own Tier 1.
 *
 * The chat's opening turn is left out (`fromChatStart`: the history begins with the chat's
 * first message): it sets the chat up — the task, the document pasted to ask about — and says
 * little of what follows. Counted, a long opening made the chat fold right after its first
 * answer, the document then answered about from a summary, when the question after it is
 * short. After the opening turn alone nothing more is expected.
 */
export function nextMessageTokens(
  history: readonly FoldUIMessage[],
  ratio: number,
  fromChatStart: boolean,
): number {
  const tokens = (message: FoldUIMessage) =>
    defaultEstimator.estimateUIMessages([message], { ratio });
  const added: number[] = [];
  // The user tokens of the turn being read, walking back; null until one is open (a history that
  // ends with its reply has no turn after it).
  let turn: number | null = null;
  for (let i = history.length - 1; i >= 0 && added.length < RECENT_TURNS; i--) {
    const message = history[i] as FoldUIMessage;
    if (message.role === "user") {
      turn = (turn ?? 0) + tokens(message);
    } else if (!message.metadata?.compaction) {
      if (turn !== null) added.push(turn);
      turn = 0;
    }
  }
  // The oldest turn loaded may have begun before the watermark: only what it shows counts. With
  // the whole chat loaded, it is the opening turn.
  if (turn && added.length < RECENT_TURNS && !fromChatStart) added.push(turn);
  return median(added);
}

/** The middle value (of the two middle ones, their mean rounded up); 0 for none. */
function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] ?? 0)
    : Math.ceil(((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2);
}

/**
 * Below this share of the trigger the next turn clearly fits, and the chat is not reloaded to
 * project it; nearer, the full projection decides (the stored view and the counted request
 * can differ a little: a dropped reasoning part, an estimate of a new message).
 */
const CLEARLY_UNDER_TRIGGER = 0.9;

/** What a turn reads of a chat for Tier 1, fresh from the database. */
export async function loadCompactionInput(
  deps: CompactDeps,
  chatId: string,
): Promise<{
  chat: Chat;
  history: FoldUIMessage[];
  positions: Map<string, number>;
} | null> {
  const chat = await getChat(deps.db, chatId);
  if (!chat) return null;
  const state = { summary: chat.contextSummary, watermark: chat.summaryWatermark };
  const rows = await loadTurnHistory(deps.db, chatId, state);
  return {
    chat,
    history: rows.map(rowToUIMessage),
    positions: positionsOf(rows),
  };
}

/**
 * Called once the reply is stored, before the turn frees the chat: when the next turn would
 * cross the trigger, takes the compaction lease and starts folding without waiting for it.
 * True when a compaction started (its trace is live from now on); never throws.
 */
export async function startBackgroundCompaction(
  deps: BackgroundDeps,
  chatId: string,
  modelId: string,
  tools?: ToolSet,
  size?: NextTurnSize,
): Promise<boolean> {
  const settings = env().compaction;
  if (!settings.enabled || !settings.background) return false;
  if (size && size.contextTokens + size.nextMessageTokens < size.trigger * CLEARLY_UNDER_TRIGGER) {
    return false;
  }
  try {
    const due = await dueCompaction(deps, chatId, modelId, tools);
    if (!due || !(await ownerMayPay(deps, due.input.chat.userId))) return false;
    const lease = await tryHoldCompactionLease(deps.db, chatId);
    if (!lease) return false;
    metric("compaction.background", { chatId, projected: due.projected, trigger: due.trigger });
    void foldInBackground(deps, due, lease).catch((error: unknown) =>
      log.warn({ err: error, chatId }, "background compaction failed"),
    );
    return true;
  } catch (error) {
    log.warn({ err: error, chatId }, "background compaction could not start");
    return false;
  }
}

/**
 * A summarizer pass is charged to the chat's owner: none for an account no longer active (an
 * admin disabled it during the turn; its stop went out before this job), nor once the day's
 * tokens are spent (the next turn would be refused anyway; Compact now is, with a 429).
 */
async function ownerMayPay(deps: BackgroundDeps, userId: string): Promise<boolean> {
  const [status, tokensLeft] = await Promise.all([
    statusOf(deps.db, userId),
    // Not known: no pass is charged on a day that cannot be read (the next turn compacts).
    deps.tokensLeft ? deps.tokensLeft().catch(() => false) : true,
  ]);
  return status === "active" && tokensLeft;
}

/** How often a caller that must wait looks whether the background compaction is done. */
const COMPACTION_POLL_MS = 100;

/**
 * Until the chat's compaction lease is free: released, or run out because its holder died.
 * Bounded by the summarizer's own timeout plus a lease, so nobody waits forever.
 */
export async function backgroundCompactionDone(
  db: Db,
  chatId: string,
  /** The waiter gave up (its turn was stopped): return at once. */
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + env().compaction.summarizerTimeoutMs + LEASE_MS;
  for (;;) {
    if (signal?.aborted) return;
    const chat = await getChat(db, chatId);
    if (!chat || !isCompacting(chat) || Date.now() > deadline) return;
    // An abort ends the pause early; the loop then returns.
    await sleep(COMPACTION_POLL_MS, undefined, { signal }).catch(() => undefined);
  }
}

type Due = NonNullable<Awaited<ReturnType<typeof dueCompaction>>>;

/** The chat as Tier 1 would fold it, when the next turn would cross the trigger; else null. */
async function dueCompaction(deps: CompactDeps, chatId: string, modelId: string, tools?: ToolSet) {
  const [input, frame, model] = await Promise.all([
    loadCompactionInput(deps, chatId),
    tools ? chatRequestFrame(new Date(), tools) : chatRequestFrame(new Date()),
    modelBudget(deps.db, modelId),
  ]);
  // A dirty chat (an overflow, a cut-short reply, an edit) compacts in its next turn, which
  // records why and shows it; the background takes only the trigger.
  if (!input || input.history.length === 0 || input.chat.compactionDirty) return null;
  const nextMessage = nextMessageTokens(
    input.history,
    model.ratio,
    holdsChatStart(input.history, stateOf(input.chat)),
  );
  const { projectedTokens: projected, trigger: chatTrigger } = projectChat(
    {
      ...input,
      model,
      overheadTokens: frame.overheadTokens,
      overheadClasses: frame.overheadClasses,
    },
    nextMessage,
  );
  if (projected + nextMessage < model.budget.trigger) return null;
  // Where Tier 1 would fold the next turn: above the budget's trigger when a fold cannot reach
  // the target (projection.ts, foldTrigger).
  const trigger = chatTrigger();
  if (projected + nextMessage < trigger) return null;
  return { input, frame, model, nextMessage, projected, trigger };
}

/** Folds the chat, streaming its trace live, and stores the trace; frees the lease at the end. */
async function foldInBackground(deps: BackgroundDeps, due: Due, lease: HeldLease): Promise<void> {
  const now = deps.now ?? Date.now;
  const chatId = due.input.chat.id;
  const messageId = generateId();
  const toolCallId = `compact-${generateId()}`;
  const trace = liveTrace(messageId);
  const published = publishTurnStream(deps.live, chatId, messageId, trace.sse, "compaction");
  // The chat deleted, or its owner disabled: the summarizer stops rather than run on (charged)
  // for a chat nobody has, and nothing is written. It answers no message, so a Stop of a reply
  // never reaches it, and it leaves the stop of all the chat's work for a turn on its way.
  const stopped = new AbortController();
  const unwatch = listenForStop(deps.live, chatId, undefined, () => stopped.abort(), {
    leavesStopOfAll: true,
  });
  let started: TraceInput | null = null;
  // What the entry's trace began as: when the summarizer started, or, for a fold that needed
  // none, worked back from its end.
  const begun = (result: TraceOutput): TraceInput =>
    started ?? {
      reason: result.reason,
      tokensBefore: result.tokensBefore,
      messages: result.messagesSummarized,
      startedAt: now() - result.durationMs,
    };
  try {
    const outcome = await compactChat(deps, {
      ...due.input,
      model: due.model,
      overheadTokens: due.frame.overheadTokens,
      overheadClasses: due.frame.overheadClasses,
      expectedTokens: due.nextMessage,
      // Lost (a stall past its term): a turn may hold the chat now; the summarizer stops.
      signal: AbortSignal.any([lease.lost, stopped.signal]),
      onSummarizeStart: ({ tokensBefore, messages, reason }) => {
        started = { reason, tokensBefore, messages, startedAt: now() };
        trace.write(traceStartChunk(toolCallId, started));
      },
      // Stored in the summary's transaction: stored after it, an edit landing between the two
      // rolled the summary back and left its entry in the new version, telling of a fold the
      // chat no longer has.
      timelineEntry: (result) =>
        isFoldedOutcome(result.outcome)
          ? traceEntry(result, begun(result), { messageId, toolCallId })
          : null,
    });
    const result = outcome.trace;
    if (!result || !outcome.timelineEntry) return;
    if (!started) trace.write(traceStartChunk(toolCallId, begun(result)));
    trace.write(traceEndChunk(toolCallId, result));
  } finally {
    // The lease is freed whatever came before it: a live bus that stopped answering (leaving
    // the stop channel fails) kept it renewed for as long as the process ran.
    try {
      await unwatch().catch(() => undefined);
      trace.end();
      await published;
      await endTurnStream(deps.live, chatId, "compaction");
    } finally {
      await lease.release();
    }
  }
}

/** A UI message stream of one timeline entry, written chunk by chunk, as server-sent events. */
function liveTrace(messageId: string) {
  let controller!: ReadableStreamDefaultController<UIMessageChunk>;
  const chunks = new ReadableStream<UIMessageChunk>({
    start: (c) => {
      controller = c;
    },
  });
  controller.enqueue({ type: "start", messageId, messageMetadata: { compaction: true } });
  // A bus that failed cancels the stream: the fold goes on without anyone watching.
  const safely = (step: () => void) => {
    try {
      step();
    } catch {}
  };
  return {
    sse: chunks.pipeThrough(new JsonToSseTransformStream()),
    write: (chunk: UIMessageChunk) => safely(() => controller.enqueue(chunk)),
    end: () =>
      safely(() => {
        controller.enqueue({ type: "finish" });
        controller.close();
      }),
  };
}
