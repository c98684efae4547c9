import type { BenchContext } from "./benchmark";
import type { MemoryPlan } from "./memory-plan";
import type { VariantRaw } from "./memory-run";
import { type Tally, tallyText } from "./memory-score";

/** The `memory` benchmark's notes: how each figure was measured, with the counts behind it. */

export type NotesInput = {
  plan: MemoryPlan;
  /** Which database the figures were measured on. */
  label: string;
  seconds: number;
  variants: ReadonlyArray<{ key: string; label: string; raw: VariantRaw }>;
  a: { user: Tally; assistant: Tally; mentioned: Tally; toolArgs: Tally; toolResults: Tally };
  b: Tally;
  lossy: Tally;
  failing: Tally;
};

const KEPT =
  "kept = the exact planted string is a substring of the final chat request the fake server received";

function perVariant(
  variants: NotesInput["variants"],
  value: (raw: VariantRaw) => number | string,
): string {
  return variants.map((v) => `${v.key} ${value(v.raw)}`).join(", ");
}

function finalPrompt(raw: VariantRaw): string {
  return raw.finalRequest ? `${raw.finalRequest.promptTokens} prompt tokens` : "no final request";
}

export function writeNotes(context: BenchContext, input: NotesInput): void {
  const { plan, variants, a } = input;
  const turns = plan.turns.length;
  const toolTurns = plan.turns.filter((t) => t.fetch !== null).length;
  const raw = (key: string) => variants.find((v) => v.key === key)?.raw as VariantRaw;
  const head = `(a) ${turns} turns at 8,192 (${toolTurns} fetch_url turns, ${plan.competingIdentifiers} competing identifiers in tool output, ${finalPrompt(raw("a"))} at the end; ${input.label}, ${input.seconds.toFixed(0)} s in all)`;
  context.note(
    "memory.user_kept_pct",
    `${head}: user-text facts incl. quoted constraints, ${tallyText(a.user)}; ${KEPT}`,
  );
  context.note(
    "memory.assistant_kept_pct",
    `(a) scripted assistant-text facts, ${tallyText(a.assistant)}`,
  );
  context.note(
    "memory.mentioned_kept_pct",
    `(a) tool-argument and tool-result facts the user mentioned again ~${Math.floor(turns / 10)} turns later, ${tallyText(a.mentioned)}`,
  );
  context.note(
    "memory.tool_args_kept_pct",
    `(a) facts in fetch_url's url argument (a path, or a hash in the query), all of them, ${tallyText(a.toolArgs)}`,
  );
  context.note(
    "memory.tool_results_kept_pct",
    `(a) facts inside fetched pages, all of them, ${tallyText(a.toolResults)}`,
  );
  context.note(
    "memory.kept_4k_user_pct",
    `(b) the same ${turns} turns at 4,096: user-text facts, ${tallyText(input.b)} (${finalPrompt(raw("b"))})`,
  );
  context.note(
    "memory.lossy_user_kept_pct",
    `(c) (a) with a summarizer that writes headings and prose but drops every identifier: user-text facts, ${tallyText(input.lossy)}`,
  );
  context.note(
    "memory.failing_user_kept_pct",
    `(c) (a) with every third summarizer call answering HTTP 500: user-text facts, ${tallyText(input.failing)}`,
  );
  const outcomes = (r: VariantRaw) =>
    Object.entries(r.outcomes)
      .map(([outcome, n]) => `${outcome} ${n}`)
      .join("/") || "none";
  context.note(
    "memory.fallbacks",
    `compaction_event rows with outcome fallback, all four chats (read with SQL); by chat: ${perVariant(variants, (r) => r.outcomes.fallback ?? 0)}; all outcomes: ${perVariant(variants, outcomes)}`,
  );
  context.note(
    "memory.summaries_cut",
    `summarizer replies the fake server cut at max_tokens (finish_reason length), all four chats; by chat: ${perVariant(variants, (r) => `${r.summariesCut}/${r.summaries}`)} of the replies it answered; summarizer errors: ${perVariant(variants, (r) => r.summarizerErrors)}; of the replies, requests for the sections a cut reply left unfinished (answered in full): ${perVariant(variants, (r) => `${r.refillsAsked} (${r.refillsWhole})`)}`,
  );
  context.note(
    "memory.failed_turns",
    `turns whose stream carried an error or whose reply was not stored, all four chats; by chat: ${perVariant(variants, (r) => r.failed.length)}; chat 400s: ${perVariant(variants, (r) => r.chatOverflows)}; fetch_url results/errors: ${perVariant(variants, (r) => `${r.toolResults}/${r.toolErrors}`)}${variants.some((v) => v.raw.unusedScripts > 0) ? `; turns with unused scripted replies: ${perVariant(variants, (r) => r.unusedScripts)}` : ""}`,
  );
}
