import { randomUUID } from "node:crypto";
import { convertToModelMessages, streamText } from "ai";
import * as chatApi from "@/app/api/chat/route";
import * as chatsRoute from "@/app/api/chats/route";
import { chatInstructions } from "@/lib/ai/prompts";
import { getLanguageModel } from "@/lib/ai/providers";
import { builtinTools } from "@/lib/ai/tools";
import type { Database } from "@/lib/db/client";
import { loadHistory } from "@/lib/db/queries/messages";
import { type FoldUIMessage, rowToUIMessage } from "@/lib/message/ui-message";
import { register } from "../helpers/auth";
import { isTurnActive } from "../helpers/db";
import { type Browser, call } from "../helpers/http";
import { postTurn } from "../helpers/turns";
import { eventually, readChunks } from "../helpers/ui-stream";

/**
 * One chat turn timed two ways: straight to the provider, and through Fold's real
 * POST /api/chat handler. This module loads Fold: import it only after setting process.env.
 */

export type BenchChat = { database: Database; browser: Browser; chatId: string; modelId: string };

/** A new user (through the real sign-up endpoint) with one empty chat. */
export async function openChat(
  database: Database,
  email: string,
  modelId: string,
): Promise<BenchChat> {
  const { response, browser } = await register(database, email);
  if (!response.ok)
    throw new Error(`sign-up answered ${response.status}: ${await response.text()}`);
  const created = await call(database, chatsRoute.POST, {
    path: "/api/chats",
    method: "POST",
    body: {},
    browser,
  });
  if (created.status !== 201) throw new Error(`POST /api/chats answered ${created.status}`);
  const { chat } = (await created.json()) as { chat: { id: string } };
  return { database, browser, chatId: chat.id, modelId };
}

const LEASE_POLL_MS = 5;
const LEASE_TIMEOUT_MS = 60_000;

/** A chunk of a turn's UI message stream. */
export type Chunk = Record<string, unknown>;

/**
 * One user turn through POST /api/chat, read to its end; returns once the chat's lease is free.
 * `problem` says what went wrong: a refusal's status and body, or the stream's error chunk.
 */
export async function sendBenchTurn(
  chat: BenchChat,
  text: string,
): Promise<{ chunks: Chunk[]; problem: string | null }> {
  const response = await postTurn(chat.database, chat.browser, {
    chatId: chat.chatId,
    modelId: chat.modelId,
    text,
  });
  let problem: string | null = null;
  let chunks: Chunk[] = [];
  if (response.status !== 200) {
    problem = `POST /api/chat answered ${response.status}: ${(await response.text()).slice(0, 300)}`;
  } else {
    chunks = await readChunks(response);
  }
  const deadline = Date.now() + LEASE_TIMEOUT_MS;
  while (await isTurnActive(chat.database.db, chat.chatId)) {
    if (Date.now() > deadline) throw new Error("the turn lease was never released");
    await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
  }
  const errorChunk = chunks.find((c) => c.type === "error");
  if (errorChunk) problem = `error chunk: ${String(errorChunk.errorText)}`;
  return { chunks, problem };
}

const userMessage = (text: string): FoldUIMessage => ({
  id: `u-${randomUUID()}`,
  role: "user",
  parts: [{ type: "text", text }],
});

/**
 * The baseline: ms to the first text delta of the request Fold would make for this chat plus
 * `text` — the same model object, instructions, tools and messages — sent with the AI SDK's
 * `streamText` over `createOpenAICompatible`, exactly as Fold's run-turn does, minus Fold.
 * Reading the stored history is not on the clock: a bare client already holds its conversation.
 */
export async function directTtftMs(chat: BenchChat, text: string): Promise<number> {
  const history = (await loadHistory(chat.database.db, chat.chatId)).map(rowToUIMessage);
  history.push(userMessage(text));
  const started = performance.now();
  const tools = builtinTools();
  const result = streamText({
    model: getLanguageModel(chat.modelId),
    instructions: chatInstructions(new Date()),
    messages: await convertToModelMessages(history, { tools }),
    tools,
  });
  let firstAt: number | undefined;
  for await (const part of result.stream) {
    if (part.type === "error") throw new Error(`direct stream failed: ${String(part.error)}`);
    if (part.type === "text-delta") firstAt ??= performance.now();
  }
  if (firstAt === undefined) throw new Error("the direct stream carried no text");
  return firstAt - started;
}

/**
 * Through Fold: ms from sending POST /api/chat (the route handler called in-process, so no
 * HTTP server in between) to the first `text-delta` event of its UI message stream. Then
 * reads the stream to its end and waits until the reply is stored and the turn lease freed.
 */
export async function foldTtftMs(chat: BenchChat, text: string): Promise<number> {
  const started = performance.now();
  const response = await call(chat.database, chatApi.POST, {
    path: "/api/chat",
    method: "POST",
    body: {
      trigger: "submit-message",
      chatId: chat.chatId,
      modelId: chat.modelId,
      message: userMessage(text),
    },
    browser: chat.browser,
  });
  if (response.status !== 200 || !response.body) {
    throw new Error(`POST /api/chat answered ${response.status}: ${await response.text()}`);
  }
  const firstAt = await firstTextDeltaAt(response.body);
  await eventually(async () => !(await isTurnActive(chat.database.db, chat.chatId)));
  return firstAt - started;
}

/** Reads a UI message stream (SSE) to its end; when its first text-delta event arrived. */
export async function firstTextDeltaAt(body: ReadableStream<Uint8Array>): Promise<number> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let firstAt: number | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const arrivedAt = performance.now();
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
      const data = buffer
        .slice(0, end)
        .replace(/^data: /, "")
        .trim();
      buffer = buffer.slice(end + 2);
      if (!data || data === "[DONE]") continue;
      const chunk = JSON.parse(data) as { type?: string; errorText?: string };
      if (chunk.type === "error") throw new Error(`Fold streamed an error: ${chunk.errorText}`);
      if (chunk.type === "text-delta") firstAt ??= arrivedAt;
    }
  }
  if (firstAt === undefined) throw new Error("Fold's stream carried no text");
  return firstAt;
}
