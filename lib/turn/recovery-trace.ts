import { generateId, type UIMessageChunk } from "ai";
import type { RecoveryEvent } from "@/lib/compaction/recovery";
import { savedPct, traceEndChunk, traceStartChunk } from "@/lib/compaction/trace";
import type { Db } from "@/lib/db/client";
import { markCompactionDirty } from "@/lib/db/compaction-state";
import { recordCompactionEvent } from "@/lib/db/queries/compaction-events";

/** Recovery happened: the chat is dirty (next turn compacts durably), the timeline shows it. */
export async function recordRecovery(
  db: Db,
  chatId: string,
  event: RecoveryEvent,
  write: (chunk: UIMessageChunk) => void,
  now: () => number,
): Promise<void> {
  const traceId = `recover-${generateId()}`;
  const reason = event.kind;
  write(
    traceStartChunk(traceId, {
      reason,
      tokensBefore: event.tokensBefore,
      messages: 0,
      startedAt: now(),
    }),
  );
  write(
    traceEndChunk(traceId, {
      outcome: "trimmed",
      reason,
      tokensBefore: event.tokensBefore,
      tokensAfter: event.tokensAfter,
      savedPct: savedPct(event.tokensBefore, event.tokensAfter),
      messagesSummarized: 0,
      summarizerModel: null,
      durationMs: 0,
      summary: null,
      note:
        event.reportedTokens !== null
          ? `The provider counted ${event.reportedTokens.toLocaleString("en-US")} tokens; the request was trimmed in memory and retried once.`
          : "The request was trimmed in memory and retried once.",
    }),
  );
  await markCompactionDirty(db, chatId);
  await recordCompactionEvent(db, {
    chatId,
    reason,
    outcome: "skipped",
    tokensBefore: event.tokensBefore,
    tokensAfter: event.tokensAfter,
    messagesSummarized: 0,
    error: "recovered: trimmed in memory and retried; the next turn compacts durably",
  });
}
