import type { ToolSet } from "ai";
import { chatRequestFrame } from "@/lib/ai/request-frame";
import { defaultEstimator } from "@/lib/context/tokens";
import { getChat } from "@/lib/db/queries/chats";
import { loadTurnHistory } from "@/lib/db/queries/messages";
import type { Chat } from "@/lib/db/schema";
import { env } from "@/lib/env";
import { log, metric } from "@/lib/log";
import { type FoldUIMessage, rowToUIMessage } from "@/lib/message/ui-message";
import { modelBudget } from "./budget";
import { type CompactDeps, compactChat, projectChat } from "./compact";

/**
 * Compaction off the critical path (DESIGN §16): right after a reply is
 * stored, when the next turn's projection — with a next message as long as
 * the user's last — crosses the trigger, the chat is folded at once, so the next turn finds the summary
 * already written instead of waiting for the summarizer.
 *
 * It holds no lease while the summarizer runs — a turn that arrives meanwhile
 * proceeds when its view fits (compact-step.ts) — and commits through the
 * one CAS writer, which refuses it if a turn, compact-now or an edit changed
 * the compaction state or the history version since it read them.
 */

/** The background compactions this process is folding right now, by chat: a turn can wait for one. */
const running = new Map<string, Promise<void>>();

/** The background compaction folding this chat in this process right now, if any. */
export function backgroundCompaction(chatId: string): Promise<void> | undefined {
  return running.get(chatId);
}

/** Starts a background compaction of the chat if the next turn would need one; never throws. */
export function compactAfterReply(
  deps: CompactDeps,
  chatId: string,
  modelId: string,
  tools?: ToolSet,
): Promise<void> {
  const settings = env().compaction;
  if (!settings.enabled || !settings.background) return Promise.resolve();
  const existing = running.get(chatId);
  if (existing) return existing;
  return compactIfDue(deps, chatId, modelId, tools).catch((error) =>
    log.warn({ err: error, chatId }, "background compaction failed"),
  );
}

/** What a turn reads of a chat for Tier 1, fresh from the database. */
export async function loadCompactionInput(
  deps: CompactDeps,
  chatId: string,
): Promise<{ chat: Chat; history: FoldUIMessage[]; firstPosition: number } | null> {
  const chat = await getChat(deps.db, chatId);
  if (!chat) return null;
  const rows = await loadTurnHistory(deps.db, chatId, {
    summary: chat.contextSummary,
    watermark: chat.summaryWatermark,
  });
  return { chat, history: rows.map(rowToUIMessage), firstPosition: (rows[0]?.seq ?? 0) + 1 };
}

async function compactIfDue(
  deps: CompactDeps,
  chatId: string,
  modelId: string,
  tools?: ToolSet,
): Promise<void> {
  const [input, frame, model] = await Promise.all([
    loadCompactionInput(deps, chatId),
    tools ? chatRequestFrame(new Date(), tools) : chatRequestFrame(new Date()),
    modelBudget(deps.db, modelId),
  ]);
  // A dirty chat (an overflow, a cut-short reply, an edit) compacts in its next turn, which
  // records why and shows it; the background takes only the trigger.
  if (!input || input.history.length === 0 || input.chat.compactionDirty) return;
  // The next turn adds the user's next message: expect one as long as their last.
  const lastUser = input.history.findLast((m) => m.role === "user");
  const nextMessage = lastUser
    ? defaultEstimator.estimateUIMessages([lastUser], { ratio: model.ratio })
    : 0;
  const projected = projectChat({ ...input, model, overheadTokens: frame.overheadTokens });
  if (projected + nextMessage < model.budget.trigger) return;
  if (running.has(chatId)) return;
  metric("compaction.background", { chatId, projected, trigger: model.budget.trigger });
  const fold = compactChat(deps, {
    ...input,
    model,
    overheadTokens: frame.overheadTokens,
    expectedTokens: nextMessage,
  })
    .then(() => undefined)
    .finally(() => running.delete(chatId));
  running.set(
    chatId,
    fold.catch(() => undefined),
  );
  await fold;
}
