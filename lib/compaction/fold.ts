import type { TokenEstimator } from "@/lib/context/tokens";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { fitLedger, joinSummary, mergeLedger, splitSummary } from "./ledger";
import { stripTrace } from "./view";

/**
 * Stage 2 of Tier 1 (DESIGN §8, §16): fold a span into the summary. The
 * summary is two parts — the narrative the summarizer writes and the
 * reference ledger Fold keeps — each with its own share of the budget. The
 * ledger is merged and fitted first (it is deterministic), the narrative gets
 * what is left; when every summarizer fails, the fallback digest extends the
 * previous narrative instead. Either way, nothing the previous ledger held is
 * lost to a failure.
 */

/** The user's own values may take this much of the summary before the narrative loses its room. */
const USER_LEDGER_MAX_SHARE = 0.75;

export type SummarizePort = (request: {
  /** The previous summary's narrative, without its ledger. */
  previousSummary: string | null;
  span: FoldUIMessage[];
  /** Tokens the narrative may take. */
  summaryBudget: number;
  signal?: AbortSignal;
}) => Promise<{ summary: string; model: string; inputTokens: number; cutReplies?: number }>;

export type FallbackPort = (request: {
  /** The previous summary's narrative, which the digest extends. */
  previousSummary: string | null;
  span: FoldUIMessage[];
  budgetTokens: number;
}) => string;

export type FoldInput = {
  previousSummary: string | null;
  span: readonly FoldUIMessage[];
  /** Message number (1-based, in the stored chat) of each span message. */
  positions: readonly number[];
  summaryBudget: number;
  /** Share of `summaryBudget` held for the ledger. */
  ledgerShare: number;
  estimator: TokenEstimator;
  summarize: SummarizePort;
  fallback: FallbackPort;
  signal?: AbortSignal;
};

export type FoldResult = {
  summary: string;
  outcome: "summarized" | "fallback";
  summarizerModel: string | null;
  /** What the trace should say besides the numbers, or null. */
  note: string | null;
};

export async function foldIntoSummary(input: FoldInput): Promise<FoldResult> {
  const countText = (text: string) => input.estimator.countText(text);
  const previous = splitSummary(input.previousSummary);
  const ledger = fitLedger(
    mergeLedger(previous.ledger, input.span, input.positions),
    Math.floor(input.ledgerShare * input.summaryBudget),
    countText,
    Math.floor(USER_LEDGER_MAX_SHARE * input.summaryBudget),
  );
  const narrativeBudget = input.summaryBudget - ledger.tokens;
  const previousNarrative = previous.narrative || null;
  const span = stripTrace(input.span);
  const ledgerNote =
    ledger.dropped > 0
      ? `reference ledger: ${ledger.entries.length} kept, ${ledger.dropped} dropped to fit (tool output first)`
      : null;
  try {
    const result = await input.summarize({
      previousSummary: previousNarrative,
      span,
      summaryBudget: narrativeBudget,
      signal: input.signal,
    });
    const cut = result.cutReplies
      ? "the summarizer reached its output limit; what it wrote was kept and completed"
      : null;
    return {
      summary: joinSummary(result.summary, ledger.text),
      outcome: "summarized",
      summarizerModel: result.model,
      note: [cut, ledgerNote].filter(Boolean).join("; ") || null,
    };
  } catch (error) {
    if (input.signal?.aborted) throw error;
    const narrative = input.fallback({
      previousSummary: previousNarrative,
      span,
      budgetTokens: narrativeBudget,
    });
    const reason = error instanceof Error ? error.message : String(error);
    return {
      summary: joinSummary(narrative, ledger.text),
      outcome: "fallback",
      summarizerModel: null,
      note: [`summarizer unavailable: ${reason}`, ledgerNote].filter(Boolean).join("; "),
    };
  }
}
