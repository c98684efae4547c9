/**
 * The fallback digest (DESIGN §8, "The summarizer"; principles 5 and 7). When
 * every summarizer model fails, the chat must still shrink, and must not
 * forget: this extends the previous narrative with key lines of the new span —
 * the user's requests, their quoted constraints, the last assistant
 * conclusion, tool errors — under the summary's own headings, within the
 * budget. The newest of the new lines are kept up to a share of the budget;
 * then the older new lines give way first, the previous narrative last. The
 * identifiers travel in the reference ledger beside it (see fold.ts).
 */
import { type DynamicToolUIPart, getToolName, isToolUIPart, type ToolUIPart } from "ai";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { COMPACTION_TRACE_TOOL_NAME } from "@/lib/message/ui-message";
import { headOf } from "@/lib/message/unstorable-text";
import { identifiersInText } from "./identifiers";
import { splitSummary } from "./ledger";
import { headingOf, NOT_RECORDED, SUMMARY_HEADINGS, type SummaryHeading } from "./prompts";

/** The digest's first line: the reader (and the next summarizer) knows nobody summarized this. */
export const FALLBACK_NOTE =
  "_Automatic digest: the summarizer was unavailable, so Fold kept key lines of these messages instead of a summary._";
/** Enough of a request to know what was asked; the identifiers in the rest are kept below. */
const REQUEST_MAX_CHARS = 200;
/** "The first ~300 chars of the last assistant text": its conclusion, usually. */
const CONCLUSION_MAX_CHARS = 300;
const ERROR_MAX_CHARS = 160;
/**
 * The share of the budget the new span's newest lines may hold over the previous narrative: a
 * narrative already as long as the budget would otherwise leave none of the span (its requests,
 * its last reply) in the digest, and those messages are behind the watermark for good.
 */
const NEW_SPAN_SHARE = 0.4;
/** The new span's lines within its share outlast the previous narrative's... */
const RESERVED_AGE = Number.MAX_SAFE_INTEGER;
/**
 * ...which outlast every other line of the new span (whose ages count its turns). Among
 * themselves, the previous lines go from the longest section first, its oldest (top) line, until
 * the sections are as long as one another, then from each in turn: room is taken from all of
 * them, and none is emptied while another still has more than one line.
 */
const PREVIOUS_AGE = 1_000_000_000;
const EMPTY_SECTION = "None.";

export type FallbackInput = {
  previousSummary: string | null;
  span: readonly FoldUIMessage[];
  budgetTokens: number;
  countTokens: (text: string) => number;
};

/**
 * One line of the digest. Lowest `age` is dropped first (the new span's oldest
 * turns; the previous narrative goes last); within an age, the least important
 * section goes first.
 */
type Item = { heading: SummaryHeading; text: string; age: number };

export function fallbackDigest(input: FallbackInput): string {
  const { span, budgetTokens, countTokens } = input;
  const previous = input.previousSummary ? previousItems(input.previousSummary) : [];
  const fromSpan = spanItems(span);
  const reserved = new Set(
    fitItems(fromSpan, Math.floor(budgetTokens * NEW_SPAN_SHARE), countTokens),
  );
  const aged = fromSpan.map((item) => (reserved.has(item) ? { ...item, age: RESERVED_AGE } : item));
  const kept = fitItems([...previous, ...aged], budgetTokens, countTokens);
  return cutToBudget(render(kept), budgetTokens, countTokens);
}

/** Drops the oldest items until the body fits; the headings themselves always stay. */
function fitItems(items: Item[], budget: number, countTokens: (text: string) => number): Item[] {
  const costs = items.map((item) => countTokens(item.text) + 1);
  let total = countTokens(render([])) + costs.reduce((a, b) => a + b, 0);
  // Oldest first; among equals, the least important section first, then bottom-up.
  const dropOrder = items
    .map((item, index) => ({ item, index }))
    .sort(
      (a, b) =>
        a.item.age - b.item.age ||
        SUMMARY_HEADINGS.indexOf(b.item.heading) - SUMMARY_HEADINGS.indexOf(a.item.heading) ||
        b.index - a.index,
    );
  const dropped = new Set<number>();
  const keptItems = () => items.filter((_, index) => !dropped.has(index));
  for (const { index } of dropOrder) {
    if (total <= budget) break;
    dropped.add(index);
    total -= costs[index] ?? 0;
  }
  // Per-line costs approximate the whole; make it exact.
  for (const { index } of dropOrder) {
    if (dropped.has(index)) continue;
    if (countTokens(render(keptItems())) <= budget) break;
    dropped.add(index);
  }
  return keptItems();
}

function render(items: readonly Item[]): string {
  const sections = SUMMARY_HEADINGS.map((heading) => {
    const lines = items.filter((item) => item.heading === heading).map((item) => item.text);
    return `## ${heading}\n${lines.length > 0 ? lines.join("\n") : EMPTY_SECTION}`;
  });
  return [FALLBACK_NOTE, ...sections].join("\n\n");
}

/**
 * The previous narrative's lines, under the heading they were under; they are dropped after the
 * new span's older lines, from the section with the most lines left, its top (oldest) line first.
 */
function previousItems(previousSummary: string): Item[] {
  const { narrative: body } = splitSummary(previousSummary); // its ledger travels beside the digest
  const found: { heading: SummaryHeading; text: string }[] = [];
  let heading: SummaryHeading = "Decisions & facts"; // text before any known heading
  for (const raw of body.split("\n")) {
    const line = raw.trimEnd();
    const known = headingOf(line);
    if (known) heading = known;
    else if (line.trim() && !isGenerated(line.trim())) found.push({ heading, text: line });
  }
  // A line's age falls with the lines below it in its section: those are kept longer.
  const below = new Map<SummaryHeading, number>();
  for (const { heading } of found) below.set(heading, (below.get(heading) ?? 0) + 1);
  return found.map((line) => {
    const left = (below.get(line.heading) ?? 1) - 1;
    below.set(line.heading, left);
    return { ...line, age: PREVIOUS_AGE - left };
  });
}

function isGenerated(line: string): boolean {
  return line === FALLBACK_NOTE || line === EMPTY_SECTION || line === NOT_RECORDED;
}

function spanItems(span: readonly FoldUIMessage[]): Item[] {
  const items: Item[] = [];
  const quotes = new Set<string>();
  const userText = (text: string, age: number) => {
    const request = firstLines(text, REQUEST_MAX_CHARS);
    if (request) items.push({ heading: "Goal & open requests", text: `- ${request}`, age });
    for (const [value, kind] of identifiersInText(text, true)) {
      if (kind !== "quote" || quotes.has(value)) continue;
      quotes.add(value);
      items.push({ heading: "Constraints & preferences", text: `- "${value}"`, age });
    }
  };
  let conclusion: Item | undefined;
  // A turn (a user message and the replies after it) ages as one: its request outlives its details.
  let age = 1;
  for (const message of span) {
    if (message.role === "user") {
      age += 1;
      userText(partsText(message.parts), age);
      continue;
    }
    if (message.role !== "assistant") continue;
    const text = partsText(message.parts);
    if (text) {
      const excerpt = excerptOf(text, CONCLUSION_MAX_CHARS);
      conclusion = { heading: "Current state & next step", text: `- Last reply: ${excerpt}`, age };
    }
    for (const part of message.parts) {
      if (part.type === "steering-message") userText(partsText(part.parts), age);
      else if (isToolUIPart(part)) {
        const error = toolError(part);
        if (error) items.push({ heading: "Errors & fixes", text: error, age });
      }
    }
  }
  if (conclusion) items.push(conclusion);
  return items;
}

function toolError(part: ToolUIPart | DynamicToolUIPart): string | null {
  const name = getToolName(part);
  if (name === COMPACTION_TRACE_TOOL_NAME || part.state !== "output-error") return null;
  return `- ${name} failed: ${excerptOf(part.errorText, ERROR_MAX_CHARS)}`;
}

function partsText(parts: readonly { type: string; text?: string }[]): string {
  return parts
    .flatMap((part) => (part.type === "text" && part.text ? [part.text] : []))
    .join("\n")
    .trim();
}

/** The first non-empty lines of `text`, up to `maxChars`, on one line. */
function firstLines(text: string, maxChars: number): string {
  const lines = text
    .split("\n")
    .map((line) => line.replace(/\s+/g, " ").trim())
    .filter(Boolean);
  let out = "";
  for (const line of lines) {
    const next = out ? `${out} / ${line}` : line;
    if (next.length > maxChars) return out || excerptOf(line, maxChars);
    out = next;
  }
  return out;
}

/** About `maxChars` of `text` on one line, cut at a word boundary. */
function excerptOf(text: string, maxChars: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= maxChars) return flat;
  const cut = headOf(flat, maxChars);
  const space = cut.lastIndexOf(" ");
  return `${space > maxChars / 2 ? cut.slice(0, space) : cut}…`;
}

/** The last resort for a budget smaller than the headings: keep the start, never nothing. */
function cutToBudget(text: string, budget: number, countTokens: (text: string) => number): string {
  if (countTokens(text) <= budget) return text;
  let chars = text.length;
  let out = text;
  while (chars > 1 && countTokens(out) > budget) {
    chars = Math.floor(chars * 0.9);
    out = headOf(text, chars).trimEnd();
  }
  return out || headOf(text, 2);
}
