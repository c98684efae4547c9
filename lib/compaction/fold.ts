import type { TokenEstimator } from "@/lib/context/tokens";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { fitLedger, joinSummary, mergeLedger, splitSummary, withoutLedgerSection } from "./ledger";
import { headingOf, type SummaryHeading } from "./prompts";
import { summarizerFailureCause } from "./summarizer-cause";
import {
  noteLineCost,
  notesCapacity,
  splitUserNotes,
  USER_NOTES_HEADING,
  withoutNotesHeadings,
  withUserNotes,
} from "./user-notes";
import { stripTrace } from "./view";

/**
 * Stage 2 of Tier 1 (DESIGN §8, §16): fold a span into the summary. The
 * summary is two parts — the narrative the summarizer writes and the
 * reference ledger Fold keeps — each with its own share of the budget. The
 * ledger is merged and fitted first (it is deterministic), the narrative gets
 * what is left; when every summarizer fails, the fallback digest extends the
 * previous narrative instead. Either way, nothing the previous ledger held is
 * lost to a failure. The user's own notes (user-notes.ts) are neither: they
 * pass around the summarizer and come back word for word.
 */

/** The user's own values may take this much of the summary before the narrative loses its room. */
const USER_LEDGER_MAX_SHARE = 0.75;
const CONSTRAINTS_HEADING: SummaryHeading = "Constraints & preferences";

export type SummarizePort = (request: {
  /** The previous summary's narrative, without its ledger. */
  previousSummary: string | null;
  span: FoldUIMessage[];
  /** Tokens the narrative may take. */
  summaryBudget: number;
  signal?: AbortSignal;
}) => Promise<{
  summary: string;
  model: string;
  inputTokens: number;
  cutReplies?: number;
  cutsRefilled?: number;
}>;

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
  const { rest, notes } = splitUserNotes(input.previousSummary);
  const { kept: keptNotes, overflow } = fitNotes(
    notes,
    notesCapacity(input.summaryBudget),
    countText,
  );
  const notesTokens = keptNotes.length > 0 ? countText(withUserNotes(null, keptNotes) ?? "") : 0;
  const previous = splitSummary(rest);
  const merged = mergeLedger(previous.ledger, input.span, input.positions);
  // The notes' room comes out of the ledger's, so the narrative keeps the share it had.
  const userMaxTokens = Math.max(
    0,
    Math.floor(USER_LEDGER_MAX_SHARE * input.summaryBudget) - notesTokens,
  );
  const ledger = fitLedger(
    merged,
    Math.max(0, Math.floor(input.ledgerShare * input.summaryBudget) - notesTokens),
    countText,
    userMaxTokens,
  );
  const narrativeBudget = input.summaryBudget - notesTokens - ledger.tokens;
  const previousNarrative = withOverflowNotes(previous.narrative, overflow) || null;
  const span = stripTrace(input.span);

  /** The summary: the narrative, and the ledger refitted into whatever the narrative left unused. */
  const finish = (narrative: string, outcome: FoldResult["outcome"], notes: (string | null)[]) => {
    const room = input.summaryBudget - notesTokens - countText(narrative);
    const final = room > ledger.tokens ? fitLedger(merged, room, countText, userMaxTokens) : ledger;
    const dropped =
      final.dropped > 0
        ? `reference ledger: ${final.entries.length} kept, ${final.dropped} dropped to fit (tool output first)`
        : null;
    return {
      summary:
        withUserNotes(
          joinSummary(withoutLedgerSection(withoutNotesHeadings(narrative)), final.text),
          keptNotes,
        ) ?? "",
      outcome,
      note: [...notes, dropped].filter(Boolean).join("; ") || null,
    };
  };

  try {
    const result = await input.summarize({
      previousSummary: previousNarrative,
      span,
      summaryBudget: narrativeBudget,
      signal: input.signal,
    });
    const cut = !result.cutReplies
      ? null
      : result.cutsRefilled
        ? "the summarizer reached its output limit; what it wrote was kept, and the sections it had not finished were asked for again"
        : "the summarizer reached its output limit; what it wrote was kept and completed";
    return { ...finish(result.summary, "summarized", [cut]), summarizerModel: result.model };
  } catch (error) {
    if (input.signal?.aborted) throw error;
    const narrative = input.fallback({
      previousSummary: previousNarrative,
      span,
      budgetTokens: narrativeBudget,
    });
    // A short cause for the trace; the shell logs the raw error (lib/chat/compact.ts).
    return {
      ...finish(narrative, "fallback", [`fallback digest used: ${summarizerFailureCause(error)}`]),
      summarizerModel: null,
    };
  }
}

/**
 * The newest notes that fit `maxTokens`, in their order (the last lines are the latest kept); the
 * others overflow, a note longer than the room among them.
 */
function fitNotes(
  notes: readonly string[],
  maxTokens: number,
  countText: (text: string) => number,
): { kept: string[]; overflow: string[] } {
  let used = countText(USER_NOTES_HEADING);
  const fits = notes.map(() => false);
  for (let i = notes.length - 1; i >= 0; i--) {
    const cost = noteLineCost(notes[i] ?? "", countText);
    if (used + cost > maxTokens) continue;
    used += cost;
    fits[i] = true;
  }
  // Blank lines between the notes kept stay (a token each, counted above).
  const kept = trimBlank(notes.filter((_, i) => fits[i]));
  const overflow = notes.filter((note, i) => !fits[i] && note !== "");
  return { kept, overflow };
}

const trimBlank = (lines: string[]) => {
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start] === "") start += 1;
  while (end > start && lines[end - 1] === "") end -= 1;
  return lines.slice(start, end);
};

/**
 * The previous narrative with the notes that did not fit at the end of its "Constraints &
 * preferences" section (the user's own words), which the summarizer keeps in substance.
 */
function withOverflowNotes(narrative: string, overflow: readonly string[]): string {
  if (overflow.length === 0) return narrative;
  const lines = narrative.split("\n");
  const at = lines.findIndex((line) => headingOf(line) === CONSTRAINTS_HEADING);
  if (at === -1) {
    return [narrative.trim(), `## ${CONSTRAINTS_HEADING}\n${overflow.join("\n")}`]
      .filter(Boolean)
      .join("\n\n");
  }
  let end = lines.findIndex(
    (line, i) => i > at && (headingOf(line) !== null || /^\s*#{1,6}\s/.test(line)),
  );
  if (end === -1) end = lines.length;
  while (end > at + 1 && (lines[end - 1] ?? "").trim() === "") end -= 1;
  return [...lines.slice(0, end), ...overflow, ...lines.slice(end)].join("\n").trim();
}
