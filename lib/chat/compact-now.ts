import { generateId, type LanguageModel } from "ai";
import { chatRequestFrame } from "@/lib/ai/request-frame";
import { type TraceOutput, traceEntry } from "@/lib/compaction/trace";
import type { Db } from "@/lib/db/client";
import { getChat } from "@/lib/db/queries/chats";
import type { Chat } from "@/lib/db/schema";
import { AppError, chatDeleted } from "@/lib/errors";
import { type LiveBus, liveBus } from "@/lib/live/bus";
import { listenForStop } from "@/lib/live/stop";
import { type FoldUIMessage, rowToUIMessage } from "@/lib/message/ui-message";
import { backgroundCompactionDone, loadCompactionInput } from "./background-compact";
import { modelBudget } from "./budget";
import { compactChat } from "./compact";
import { holdLease } from "./lease";

/**
 * Compact now (DESIGN §8): Tier 1 forced, outside a turn. Holds the turn lease
 * so it never races a streaming reply (409 instead), waits for a background
 * compaction that is running, and leaves a trace entry in the timeline when it
 * folded something. A stop for the chat ends it with nothing written (409).
 */
export async function compactNow(
  deps: { db: Db; resolveModel: (modelId: string) => LanguageModel; live?: LiveBus },
  chat: Chat,
  modelId: string,
): Promise<{ trace: TraceOutput | null; message: FoldUIMessage | null }> {
  const { db } = deps;
  // The same short, owned, renewed lease a turn holds: a long summarizer run keeps it.
  const lease = await holdLease(
    db,
    chat.id,
    "A reply is streaming in this chat. Compact after it finishes.",
  );
  // A stop for the chat (Stop with no message named, an admin disabling the account) ends it as
  // it ends a turn's fold: the summarizer's request is aborted and nothing is written.
  const stop = new AbortController();
  const unwatch = listenForStop(deps.live ?? liveBus(), chat.id, undefined, () => stop.abort());
  // Deleting the chat stops what runs on it: that is the answer then.
  const stopped = async () =>
    (await getChat(db, chat.id))
      ? new AppError("conflict:stopped", "Compacting was stopped; the chat is as it was.")
      : chatDeleted();
  try {
    // A background compaction folding this chat right now would make one of the two lose the
    // commit: let it land, then fold what it left.
    await backgroundCompactionDone(db, chat.id, stop.signal);
    if (stop.signal.aborted) throw await stopped();
    // What a turn reads for its fold: the summary and what follows its watermark (with the
    // pinned messages), not the whole chat.
    const input = await loadCompactionInput(deps, chat.id);
    if (!input || input.history.length === 0) return { trace: null, message: null };
    const [frame, model] = await Promise.all([
      chatRequestFrame(new Date()),
      modelBudget(db, modelId),
    ]);
    const outcome = await compactChat(deps, {
      ...input,
      model,
      overheadTokens: frame.overheadTokens,
      overheadClasses: frame.overheadClasses,
      force: true,
      signal: stop.signal,
      // Stored with the fold, in its transaction: an entry that failed to store after it would
      // leave the chat folded while the click answered that Compact failed. Nothing to fold is
      // an answer for the person who clicked, not an event in the chat's timeline: no entry.
      timelineEntry: (trace) =>
        traceEntry(
          trace,
          {
            reason: "manual",
            tokensBefore: trace.tokensBefore,
            messages: trace.messagesSummarized,
            startedAt: Date.now() - trace.durationMs,
          },
          { messageId: generateId(), toolCallId: `compact-${generateId()}` },
        ),
    }).catch(async (error: unknown) => {
      if (!stop.signal.aborted) throw error;
      throw await stopped();
    });
    const entry = outcome.timelineEntry;
    return { trace: outcome.trace, message: entry ? rowToUIMessage(entry) : null };
  } finally {
    await unwatch().catch(() => undefined);
    await lease.release();
  }
}
