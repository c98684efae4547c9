import { generateId, type UIMessageChunk } from "ai";
import { parseModelId } from "@/lib/ai/model-id";
import type { RecoveryEvent } from "@/lib/compaction/recovery";
import { savedPct, traceEndChunk, traceStartChunk } from "@/lib/compaction/trace";
import type { Db } from "@/lib/db/client";
import { markCompactionDirty } from "@/lib/db/compaction-state";
import { recordCompactionEvent } from "@/lib/db/queries/compaction-events";
import { log } from "@/lib/log";
import {
  evictContextWindow,
  inspectContextWindow,
  keepObservedWindow,
} from "@/lib/model-window/window";

/**
 * Recovery happened: the chat is dirty (next turn compacts durably), the timeline shows it.
 * Never throws for the database: the turn's retry does not wait on its own bookkeeping.
 */
export async function recordRecovery(
  db: Db,
  chatId: string,
  event: RecoveryEvent,
  write: (chunk: UIMessageChunk) => void,
  now: () => number,
  /** The chat's model: its window is looked up again when the provider stated a smaller one. */
  modelId?: string,
): Promise<void> {
  const traceId = `recover-${generateId()}`;
  const parsed = modelId ? parseModelId(modelId) : null;
  // The server runs the model with less than Fold looked up (restarted with a smaller context,
  // or its own report out of reach, behind a proxy that passes only /v1): what it stated is
  // kept as an observed window until the server reports a different one, and the cached window
  // is dropped, so the next message budgets with it.
  let kept: StatedWindowKept = { kept: false };
  if (event.statedWindow !== null && parsed) {
    kept = await keepStatedWindow(db, chatId, parsed, event.statedWindow, event).catch(
      (error: unknown) => {
        log.warn({ err: error, chatId }, "recording the window a provider stated failed");
        return { kept: false };
      },
    );
    evictContextWindow(parsed.provider, parsed.model);
  }
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
      note: recoveryNote(event, kept),
    }),
  );
  // Bookkeeping must never cost the user their answer: the retry goes ahead without it (the
  // next turn's projection still finds an oversized view, it only is not told to compact).
  try {
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
  } catch (error) {
    log.warn({ err: error, chatId }, "recording a recovery failed; the retry goes ahead");
  }
}

/**
 * Keeps a window the provider stated that is smaller than the one Fold looked up, as a silent
 * cut's is kept (an observed window): true when it was. Looked up again alone, the window could
 * come back as large (a catalog's or an assumed length, the server's own report out of reach)
 * and every later turn would be refused and retried.
 */
async function keepStatedWindow(
  db: Db,
  chatId: string,
  model: { provider: string; model: string },
  statedWindow: number,
  event: RecoveryEvent,
): Promise<StatedWindowKept> {
  const { window, chain } = await inspectContextWindow(model.provider, model.model, db);
  // An admin's override wins over what Fold observes: the note says so instead.
  if (window.source === "override" && statedWindow < window.contextWindow) {
    return { kept: false, override: window.contextWindow };
  }
  const kept = await keepObservedWindow(db, model, chain, {
    contextWindow: statedWindow,
    sentTokens: event.reportedTokens ?? event.tokensBefore,
    chatId,
  });
  return { kept };
}

/** Whether a stated window is kept for the next turns, or an admin's override stands over it. */
type StatedWindowKept = { kept: boolean; override?: number };

function recoveryNote(event: RecoveryEvent, { kept, override }: StatedWindowKept): string {
  const n = (tokens: number) => tokens.toLocaleString("en-US");
  const counted =
    event.reportedTokens !== null ? `The provider counted ${n(event.reportedTokens)} tokens; ` : "";
  const window =
    event.statedWindow !== null
      ? override !== undefined
        ? ` It says the model's window is ${n(event.statedWindow)} tokens, less than the ${n(override)} an admin's override in Admin → Models sets: the retry was trimmed for that. Fold keeps the override, so long requests will be refused again: lower or remove it there, or run the model with a larger context.`
        : kept
          ? ` It says the model's window is ${n(event.statedWindow)} tokens, less than Fold had looked up: the retry was trimmed for that, and Fold uses ${n(event.statedWindow)} for this model from your next message on.`
          : ` It says the model's window is ${n(event.statedWindow)} tokens, less than Fold had looked up: the retry was trimmed for that, and the window is looked up again for your next message.`
      : "";
  return `${counted}${counted ? "the" : "The"} request was trimmed in memory and retried once.${window}`;
}
