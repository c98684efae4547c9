import type { ToolSet } from "ai";
import { eq } from "drizzle-orm";
import { getLanguageModel } from "@/lib/ai/providers";
import { type Database, withDatabase } from "@/lib/db/client";
import { chat as chatTable } from "@/lib/db/schema";
import type { TurnRequest } from "@/lib/turn/request";
import { runTurn } from "@/lib/turn/run-turn";
import { isTurnActive } from "../helpers/db";
import { eventually, readChunks } from "../helpers/ui-stream";

/**
 * One turn through Fold's turn pipeline (`runTurn`, what POST /api/chat calls) without the
 * HTTP and auth layers, for benchmarks that bring their own tools or use the server-internal
 * `continue` trigger. This module loads Fold: import it only after setting process.env.
 */

/** Summaries and long tool loops can hold the lease for a while after the stream ends. */
const LEASE_TIMEOUT_MS = 120_000;

export type Chunk = Record<string, unknown>;

export type DirectTurn = {
  chunks: Chunk[];
  /** The stream's error chunk text, or what runTurn threw before streaming; null if none. */
  error: string | null;
  /** The id Fold gave its reply (the stream's `start` chunk). */
  replyId: string | null;
};

export async function runDirectTurn(input: {
  /** Also the scope's database: Fold reads model-window overrides through `getDb()`. */
  database: Database;
  chatId: string;
  modelId: string;
  tools: ToolSet;
  request: TurnRequest;
}): Promise<DirectTurn> {
  const { database, chatId, modelId } = input;
  const { db } = database;
  const [chat] = await db.select().from(chatTable).where(eq(chatTable.id, chatId));
  if (!chat) throw new Error(`no chat ${chatId}`);
  let chunks: Chunk[] = [];
  let error: string | null = null;
  try {
    chunks = await withDatabase(database, async () => {
      const response = await runTurn(
        {
          db,
          resolveModel: getLanguageModel,
          defaultModelId: async () => modelId,
          tools: input.tools,
        },
        chat,
        input.request,
      );
      return readChunks(response);
    });
  } catch (thrown) {
    error = thrown instanceof Error ? thrown.message : String(thrown);
  }
  await eventually(async () => !(await isTurnActive(db, chatId)), LEASE_TIMEOUT_MS);
  const errorChunk = chunks.find((c) => c.type === "error");
  if (errorChunk) error ??= String(errorChunk.errorText);
  const start = chunks.find((c) => c.type === "start")?.messageId;
  return { chunks, error, replyId: typeof start === "string" ? start : null };
}
