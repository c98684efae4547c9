import { asc, eq } from "drizzle-orm";
import { expect } from "vitest";
import * as compactRoute from "@/app/api/chats/[id]/compact/route";
import * as contextRoute from "@/app/api/chats/[id]/context/route";
import * as continueRoute from "@/app/api/chats/[id]/continue/route";
import * as pinsRoute from "@/app/api/chats/[id]/pins/route";
import type { Database, Db } from "@/lib/db/client";
import { listCompactionEvents } from "@/lib/db/queries/compaction-events";
import { loadHistory } from "@/lib/db/queries/messages";
import {
  type Chat,
  type CompactionEvent,
  chat as chatTable,
  compactionEvent,
  type Message,
} from "@/lib/db/schema";
import { contentText } from "../fixtures/fake-openai/request";
import type { RecordedRequest } from "../fixtures/fake-openai/types";
import { compactionSettled, isCompactingNow } from "./db";
import { type Browser, call } from "./http";
import { longMessage, sendTurn } from "./turns";

/**
 * Shared by the compaction integration tests: the compact-now, continue, pins and context
 * routes, the chat row and its events, and what the fake server was asked.
 */

export type CompactResponse = {
  trace: { outcome: string; reason: string; tokensBefore: number; tokensAfter: number } | null;
  message: {
    id: string;
    role: string;
    parts: Array<{ type: string }>;
    metadata?: Record<string, unknown>;
  } | null;
  context: { projectedTokens: number; modelId: string };
};

export type ContextResponse = {
  projectedTokens: number;
  method: "real" | "estimate";
  budget: { inputBudget: number; trigger: number; target: number; outputReserve: number };
};

/** POST /api/chats/:id/compact. */
export function compactNowCall(
  database: Database,
  browser: Browser,
  chatId: string,
  body: Record<string, unknown> = {},
): Promise<Response> {
  return call(database, compactRoute.POST, {
    path: `/api/chats/${chatId}/compact`,
    method: "POST",
    body,
    params: { id: chatId },
    browser,
  });
}

/** POST /api/chats/:id/continue: Continue in a new chat. */
export function continueCall(database: Database, browser: Browser, chatId: string) {
  return call(database, continueRoute.POST, {
    path: `/api/chats/${chatId}/continue`,
    method: "POST",
    body: {},
    params: { id: chatId },
    browser,
  });
}

/** PUT /api/chats/:id/pins: `{ messageId, pinned }`, or any body a test sends. */
export function pinCall(
  database: Database,
  browser: Browser,
  chatId: string,
  body: unknown,
): Promise<Response> {
  return call(database, pinsRoute.PUT, {
    path: `/api/chats/${chatId}/pins`,
    method: "PUT",
    body,
    params: { id: chatId },
    browser,
  });
}

/** GET /api/chats/:id/context for a model. */
export async function contextOf(
  database: Database,
  browser: Browser,
  chatId: string,
  modelId: string,
): Promise<ContextResponse> {
  const response = await call(database, contextRoute.GET, {
    path: `/api/chats/${chatId}/context?modelId=${encodeURIComponent(modelId)}`,
    params: { id: chatId },
    browser,
  });
  if (!response.ok) throw new Error(`context answered ${response.status}`);
  return (await response.json()) as ContextResponse;
}

export async function chatRow(db: Db, chatId: string): Promise<Chat> {
  const [row] = await db.select().from(chatTable).where(eq(chatTable.id, chatId));
  if (!row) throw new Error(`chat ${chatId} not found`);
  return row;
}

/** Every compaction event of a chat, oldest first. */
export async function eventsOf(db: Db, chatId: string): Promise<CompactionEvent[]> {
  const rows = await db
    .select()
    .from(compactionEvent)
    .where(eq(compactionEvent.chatId, chatId))
    .orderBy(asc(compactionEvent.createdAt));
  return rows;
}

export function historyOf(db: Db, chatId: string): Promise<Message[]> {
  return loadHistory(db, chatId);
}

/** A manual compaction's timeline entry: only the trace, no reply (a turn's reply may carry a trace too). */
export function isTraceEntry(row: Pick<Message, "parts" | "metadata">): boolean {
  const parts = row.parts as Array<{ type?: string }>;
  return (
    (row.metadata as { compaction?: boolean } | null)?.compaction === true ||
    (parts.length > 0 && parts.every((p) => p.type === "tool-compact_context"))
  );
}

/** The rows that are real conversation: the manual-compaction timeline entries left out. */
export function conversationOf(rows: readonly Message[]): Message[] {
  return rows.filter((r) => !isTraceEntry(r));
}

export function isSummaryRequest(request: Pick<RecordedRequest, "messages">): boolean {
  return request.messages.some(
    (m) => m.role === "system" && contentText(m).includes("Goal & open requests"),
  );
}

/** The text the summarizer was given (its user messages). */
export function summarizerPrompt(request: Pick<RecordedRequest, "messages">): string {
  return request.messages
    .filter((m) => m.role === "user")
    .map(contentText)
    .join("\n");
}

/**
 * The `Question N` numbers of the span's own `<user>` blocks in a summarizer
 * request (goals carried inside a previous summary are not `<user>` blocks).
 */
export function spanQuestions(request: Pick<RecordedRequest, "messages">): number[] {
  const prompt = summarizerPrompt(request);
  return [...prompt.matchAll(/<user>\s*Question (\d+): please think/g)].map((m) => Number(m[1]));
}

/** The last user text a chat-model (not summarizer) request carried. */
export function lastUserTextOf(request: Pick<RecordedRequest, "messages">): string {
  const users = request.messages.filter((m) => m.role === "user");
  const last = users[users.length - 1];
  return last ? contentText(last) : "";
}

/** A six-heading summary the summarizer validation accepts, with a marker to recognise it by. */
export function scriptedSummary(marker: string): string {
  return [
    "## Goal & open requests",
    `- ${marker}`,
    "## Constraints & preferences",
    "- none stated",
    "## Current state & next step",
    "- continue with the latest request",
    "## Decisions & facts",
    "- none recorded",
    "## Artifacts & references",
    "- none",
    "## Errors & fixes",
    "- none",
  ].join("\n");
}

/** Turns a chat is given before a test gives up waiting for one to cross the trigger. */
const FILL_MAX_TURNS = 15;

/**
 * Long turns until a reply leaves the next turn over the trigger ("due": a compaction is running
 * in the background as the turn ends) or until the chat has been compacted; the turns' chunks.
 */
export async function fillUntil(
  until: "due" | "compacted",
  database: Database,
  browser: Browser,
  chatId: string,
  modelId: string,
): Promise<Record<string, unknown>[][]> {
  const turns: Record<string, unknown>[][] = [];
  for (let turn = 0; turn < FILL_MAX_TURNS; turn++) {
    const { response, chunks } = await sendTurn(database, browser, {
      chatId,
      modelId,
      text: longMessage(turn),
    });
    expect(response.status).toBe(200);
    turns.push(chunks);
    // The decision is taken before the turn frees the chat, so it is known when the stream ends.
    const folding = await isCompactingNow(database.db, chatId);
    if (folding && until === "due") return turns;
    await compactionSettled(database.db, chatId);
    if (until === "compacted" && (await listCompactionEvents(database.db, chatId)).length > 0) {
      return turns;
    }
  }
  throw new Error(`no reply crossed the trigger in ${FILL_MAX_TURNS} turns`);
}
