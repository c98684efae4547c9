import { generateId, type LanguageModel } from "ai";
import { eq } from "drizzle-orm";
import { chatInstructions } from "@/lib/ai/prompts";
import { builtinTools } from "@/lib/ai/tools";
import { type FoldUIMessage, rowToUIMessage } from "@/lib/chat/ui-message";
import { COMPACTION_TRACE_TOOL_NAME } from "@/lib/context/count-units";
import { estimateOverhead } from "@/lib/context/overhead";
import { defaultEstimator } from "@/lib/context/tokens";
import type { Db } from "@/lib/db/client";
import {
  acquireTurnLease,
  appendMessage,
  loadHistory,
  releaseTurnLease,
} from "@/lib/db/queries/messages";
import { type Chat, chat as chatTable } from "@/lib/db/schema";
import { AppError } from "@/lib/errors";
import { compactChat } from "./compact";
import type { TraceOutput } from "./trace";

const COMPACT_LEASE_MS = 120_000;

/**
 * Compact now (DESIGN §8): Tier 1 forced, outside a turn. Holds the turn lease
 * so it never races a streaming reply (409 instead), and leaves a trace entry
 * in the timeline.
 */
export async function compactNow(
  deps: { db: Db; resolveModel: (modelId: string) => LanguageModel },
  chat: Chat,
  modelId: string,
): Promise<{ trace: TraceOutput | null; message: FoldUIMessage | null }> {
  const { db } = deps;
  if (!(await acquireTurnLease(db, chat.id, COMPACT_LEASE_MS))) {
    throw new AppError(
      "conflict:turn",
      "A reply is streaming in this chat. Compact after it finishes.",
    );
  }
  try {
    const [fresh] = await db.select().from(chatTable).where(eq(chatTable.id, chat.id));
    const history = (await loadHistory(db, chat.id)).map(rowToUIMessage);
    if (!fresh || history.length === 0) return { trace: null, message: null };
    const overheadTokens = await estimateOverhead(
      defaultEstimator,
      chatInstructions(new Date()),
      builtinTools(),
    );
    const outcome = await compactChat(deps, {
      chat: fresh,
      history,
      modelId,
      overheadTokens,
      force: true,
    });
    if (!outcome.trace) return { trace: null, message: null };
    const startedAt = Date.now() - outcome.trace.durationMs;
    const stored = await appendMessage(db, chat.id, {
      id: generateId(),
      role: "assistant",
      parts: [
        {
          type: `tool-${COMPACTION_TRACE_TOOL_NAME}`,
          toolCallId: `compact-${generateId()}`,
          state: "output-available",
          input: {
            reason: "manual",
            tokensBefore: outcome.trace.tokensBefore,
            messages: outcome.trace.messagesSummarized,
            startedAt,
          },
          output: outcome.trace,
        },
      ],
      metadata: { compaction: true },
    });
    return { trace: outcome.trace, message: rowToUIMessage(stored) };
  } finally {
    await releaseTurnLease(db, chat.id);
  }
}
