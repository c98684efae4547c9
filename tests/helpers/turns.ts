import { eq } from "drizzle-orm";
import * as chatApi from "@/app/api/chat/route";
import * as chatRoute from "@/app/api/chats/[id]/route";
import * as chatsRoute from "@/app/api/chats/route";
import type { Database } from "@/lib/db/client";
import { loadHistory } from "@/lib/db/queries/messages";
import { user } from "@/lib/db/schema";
import { register } from "./auth";
import { isTurnActive } from "./db";
import { type Browser, call } from "./http";
import { eventually, readChunks } from "./ui-stream";

/** Creates a chat through the API and returns its id. */
export async function newChat(database: Database, browser: Browser): Promise<string> {
  const response = await call(database, chatsRoute.POST, {
    path: "/api/chats",
    method: "POST",
    body: {},
    browser,
  });
  return ((await response.json()) as { chat: { id: string } }).chat.id;
}

type TurnInput = {
  chatId: string;
  modelId: string;
  text: string;
  id?: string;
  /** The page's id for this request, as its Stop names it. */
  attemptId?: string;
  /** An edit's: the chat's last message when the page was told what it moves. */
  throughId?: string;
};

/** POST /api/chat with one user message; the response as it comes, nothing awaited after it. */
export function postTurn(database: Database, browser: Browser, input: TurnInput) {
  return call(database, chatApi.POST, {
    path: "/api/chat",
    method: "POST",
    body: {
      trigger: "submit-message",
      chatId: input.chatId,
      modelId: input.modelId,
      ...(input.attemptId ? { attemptId: input.attemptId } : {}),
      ...(input.throughId ? { throughId: input.throughId } : {}),
      message: {
        id: input.id ?? `u-${crypto.randomUUID()}`,
        role: "user",
        parts: [{ type: "text", text: input.text }],
      },
    },
    browser,
  });
}

/** POST /api/chat asking for the reply again: to `messageId`'s turn, or to the latest one. */
export function postRegenerate(
  database: Database,
  browser: Browser,
  input: {
    chatId: string;
    modelId: string;
    messageId?: string;
    attemptId?: string;
    throughId?: string;
  },
) {
  return call(database, chatApi.POST, {
    path: "/api/chat",
    method: "POST",
    body: { trigger: "regenerate-message", ...input },
    browser,
  });
}

export type ShownChat = {
  chat: { contextSummary: string | null; summaryWatermark: string | null };
  messages: Array<{
    id: string;
    role: string;
    parts: Array<{ type: string; text?: string }>;
    metadata: Record<string, unknown> | null;
  }>;
  replying: boolean;
};

/** GET /api/chats/:id as the page reads it: the chat, its latest messages, whether a reply runs. */
export async function shownChat(database: Database, browser: Browser, chatId: string) {
  const response = await call(database, chatRoute.GET, {
    path: `/api/chats/${chatId}`,
    params: { id: chatId },
    browser,
  });
  return (await response.json()) as ShownChat;
}

/** DELETE /api/chats/:id, as the chat list's Delete sends it. */
export function deleteChat(database: Database, browser: Browser, chatId: string) {
  return call(database, chatRoute.DELETE, {
    path: `/api/chats/${chatId}`,
    method: "DELETE",
    params: { id: chatId },
    browser,
  });
}

/** Sends one user message through POST /api/chat and waits until the turn is stored. */
export async function sendTurn(database: Database, browser: Browser, input: TurnInput) {
  const response = await postTurn(database, browser, input);
  const chunks = response.ok ? await readChunks(response) : [];
  await eventually(async () => !(await isTurnActive(database.db, input.chatId)));
  return { response, chunks };
}

/**
 * Sends each prompt as the next turn of a new chat and returns, per turn, how far the reply's
 * stored input estimate missed the provider's count of that turn's prompt: (estimate − real) /
 * real. `promptTokens` reads the provider's count of the n-th turn's request.
 */
export async function estimateMisses(
  database: Database,
  browser: Browser,
  input: {
    modelId: string;
    prompts: readonly string[];
    promptTokens: (request: number) => number;
  },
): Promise<number[]> {
  const chatId = await newChat(database, browser);
  const misses: number[] = [];
  for (const [turn, text] of input.prompts.entries()) {
    await sendTurn(database, browser, { chatId, modelId: input.modelId, text, id: `u${turn}` });
    const rows = await loadHistory(database.db, chatId);
    const metadata = rows.at(-1)?.metadata as { stats: { estimatedInputTokens: number } };
    const real = input.promptTokens(turn);
    misses.push((metadata.stats.estimatedInputTokens - real) / real);
  }
  return misses;
}

/** A user message of roughly `words` words, unique per turn. */
export function longMessage(turn: number, words = 220): string {
  const vocabulary = [
    "context",
    "window",
    "summary",
    "budget",
    "token",
    "turn",
    "model",
    "history",
    "compaction",
    "watermark",
  ];
  const body = Array.from(
    { length: words },
    (_, i) => vocabulary[(i * 7 + turn) % vocabulary.length],
  ).join(" ");
  return `Question ${turn}: please think about item-${turn} carefully. ${body}`;
}

/**
 * A new user (`email`) with a chat whose first turn has been answered: their cookies are
 * verified and remembered, and the chat has a title (later messages are a chat under way).
 */
export async function answeredOnce(database: Database, email: string, modelId: string) {
  const { browser } = await register(database, email);
  const chatId = await newChat(database, browser);
  const first = await sendTurn(database, browser, { chatId, modelId, text: "hello" });
  if (first.response.status !== 200)
    throw new Error(`the first turn answered ${first.response.status}`);
  const [row] = await database.db.select().from(user).where(eq(user.email, email));
  if (!row) throw new Error("no user");
  return { browser, chatId, userId: row.id };
}
