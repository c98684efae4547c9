import { randomUUID } from "node:crypto";
import type { ToolSet } from "ai";
import { invalidateFrom } from "@/lib/chat/invalidate";
import type { Database } from "@/lib/db/client";
import { listCompactionEvents } from "@/lib/db/queries/compaction-events";
import { appendMessage, loadHistory, truncateFrom } from "@/lib/db/queries/messages";
import type { TurnRequest } from "@/lib/turn/request";
import { isSummaryRequest } from "../fixtures/fake-openai/summarizer";
import type { FakeOpenAI } from "../fixtures/fake-openai/types";
import { seedChat } from "../helpers/fixtures";
import { runDirectTurn } from "./direct-turn";
import { assistantParts, type Conversation } from "./replay-corpus";

/**
 * Replays one recorded conversation through Fold's turn pipeline in a new empty chat: each
 * user turn is submitted, each assistant turn is one model call (`continue` after the first),
 * and after every call Fold's own reply is deleted and the corpus's assistant turn stored in
 * its place. Records what the fake server saw per call. This module loads Fold: import it
 * only after setting process.env.
 */

/** Fold's refusal ("Your message is too long…") or its recovery's last word ("…no longer fits…"). */
const REFUSAL = /too long|no longer fits/i;
/** Compaction events that wrote a summary. */
const FOLDED = new Set(["summarized", "fallback"]);

export type CallKind = "ok" | "refused" | "failed";

export type ReplayCall = {
  /** Index of the corpus turn this call answers (the user turn when nothing answers it). */
  turn: number;
  kind: CallKind;
  error: string | null;
  /** Chat requests (not summarizer ones) in the order the fake server got them. */
  chat: Array<{ promptTokens: number; status: number }>;
  summarizerRequests: number;
  summarizerErrors: number;
  /** Summarizer replies cut at max_tokens. */
  summariesCut: number;
  /** Prompt tokens of this call's first chat request after its last summarizer request (if any). */
  chatAfterSummary: number | null;
  /** New compaction events that wrote a summary, and every new event as reason/outcome. */
  compactions: number;
  events: string[];
};

export type ReplayedConversation = {
  id: string;
  /** The chat the replay left, for scoring what is stored (replay-recall.ts). */
  chatId: string;
  calls: ReplayCall[];
  /** The body of the last chat request the fake server received for this conversation. */
  lastChatBody: Record<string, unknown> | null;
  seconds: number;
};

/** The stats of Fold's reply among the rows it stored for a call, as stored metadata. */
function usageOf(rows: ReadonlyArray<{ role: string; metadata: unknown }>) {
  const reply = rows.findLast((row) => row.role === "assistant");
  const stats = (reply?.metadata as { stats?: unknown } | null | undefined)?.stats;
  return stats ? { stats } : null;
}

function classify(error: string | null, stored: boolean): { kind: CallKind; error: string | null } {
  if (error !== null) return { kind: REFUSAL.test(error) ? "refused" : "failed", error };
  return stored ? { kind: "ok", error } : { kind: "failed", error: "Fold stored no reply" };
}

export async function replayConversation(input: {
  database: Database;
  fake: FakeOpenAI;
  conversation: Conversation;
  modelId: string;
  tools: ToolSet;
  /**
   * Store the corpus turn with the usage stats of Fold's reply to that call (off: no
   * metadata, as an imported chat would have). On, the stored usage is far below the
   * stored content — the tool result was never part of that call.
   */
  keepUsage: boolean;
  log: (line: string) => void;
}): Promise<ReplayedConversation> {
  const { database, fake, conversation, modelId } = input;
  const { db } = database;
  const started = performance.now();
  const chat = await seedChat(db, { title: `replay ${conversation.id}` });
  const ours = new Set<string>();
  const seenEvents = new Set<string>();
  const calls: ReplayCall[] = [];
  let lastChatBody: Record<string, unknown> | null = null;
  const tag = randomUUID().slice(0, 8);

  for (let i = 0; i < conversation.turns.length; i++) {
    const turn = conversation.turns[i];
    if (!turn) continue;
    let request: TurnRequest;
    let answered = i;
    if (turn.role === "user") {
      const id = `u-${tag}-${i}`;
      ours.add(id);
      request = {
        trigger: "submit-message",
        chatId: chat.id,
        modelId,
        message: { id, role: "user", parts: [{ type: "text", text: turn.text }] },
      };
      if (conversation.turns[i + 1]?.role === "assistant") answered = i + 1;
    } else {
      request = { trigger: "continue", chatId: chat.id, modelId };
    }

    fake.reset();
    const outcome = await runDirectTurn({
      database,
      chatId: chat.id,
      modelId,
      tools: input.tools,
      request,
    });

    // Drop whatever Fold stored for this call, as Fold replaces a reply (lib/turn/apply-request.ts:
    // a summary whose watermark goes with it is rolled back first), then store the corpus's turn.
    const rows = await loadHistory(db, chat.id);
    const foldRows = rows.filter((row) => !ours.has(row.id));
    const firstFoldSeq = Math.min(...foldRows.map((row) => row.seq));
    if (foldRows.length > 0) {
      await invalidateFrom(db, chat.id, firstFoldSeq);
      await truncateFrom(db, chat.id, firstFoldSeq);
    }
    const corpusTurn = conversation.turns[answered];
    if (corpusTurn?.role === "assistant") {
      const id = `a-${tag}-${answered}`;
      ours.add(id);
      await appendMessage(db, chat.id, {
        id,
        role: "assistant",
        parts: assistantParts(corpusTurn, `call-${tag}-${answered}`),
        metadata: input.keepUsage ? usageOf(foldRows) : null,
      });
    }
    i = answered;

    const chatRequests = fake.requests.filter((r) => !isSummaryRequest(r.messages));
    const lastSummary = fake.requests.findLastIndex((r) => isSummaryRequest(r.messages));
    const afterSummary = fake.requests
      .slice(lastSummary + 1)
      .find((r) => !isSummaryRequest(r.messages));
    const summaries = fake.requests.filter((r) => isSummaryRequest(r.messages));
    const last = chatRequests.at(-1);
    if (last) lastChatBody = last.body;

    const events = (await listCompactionEvents(db, chat.id)).filter((e) => !seenEvents.has(e.id));
    for (const event of events) seenEvents.add(event.id);
    calls.push({
      turn: answered,
      ...classify(outcome.error, foldRows.length > 0),
      chat: chatRequests.map((r) => ({ promptTokens: r.promptTokens, status: r.status })),
      summarizerRequests: summaries.length,
      summarizerErrors: summaries.filter((r) => r.status !== 200).length,
      summariesCut: summaries.filter((r) => r.finishReason === "length").length,
      chatAfterSummary: afterSummary?.promptTokens ?? null,
      compactions: events.filter((e) => FOLDED.has(e.outcome)).length,
      events: events.map((e) => `${e.reason}/${e.outcome}`),
    });
  }

  const seconds = (performance.now() - started) / 1000;
  const bad = calls.filter((c) => c.kind !== "ok").length;
  const folded = calls.reduce((n, c) => n + c.compactions, 0);
  input.log(
    `replay: ${conversation.id}: ${calls.length} calls, ${bad} refused or failed, ${folded} compactions, ${seconds.toFixed(1)} s`,
  );
  return { id: conversation.id, chatId: chat.id, calls, lastChatBody, seconds };
}
