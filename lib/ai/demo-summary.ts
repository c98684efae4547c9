/**
 * The demo model as Fold's summarizer (DESIGN §13, §8): when a call carries
 * the summarizer's instructions, it answers with an extractive summary under
 * the six headings instead of a chat reply, so a new user's first compaction
 * shows a real summary. Deterministic, verbatim, merged with the previous
 * summary (newer wins), and trimmed oldest-first to the call's output limit.
 */
import type { LanguageModelV4Prompt } from "@ai-sdk/provider";
import { headingOf, SUMMARY_HEADINGS, type SummaryHeading } from "@/lib/compaction/prompts";
import {
  artifactsOf,
  conclusionOf,
  constraintsOf,
  errorOf,
  factsOf,
  firstLine,
  parseSpan,
  type SpanBlock,
} from "./demo-summary-extract";

/** What a heading with nothing under it says (the summarizer instructions ask for it). */
const NOTHING_RECORDED = "None.";
/** Placeholders other writers put under an empty heading; not items worth carrying. */
const EMPTY_MARKERS = new Set(["none.", "none", "(not recorded)", "n/a"]);
const PREVIOUS_PATTERN = /<previous-summary>\n?([\s\S]*?)\n?<\/previous-summary>/;
const CONVERSATION_OPEN = "<conversation>";
const CONVERSATION_CLOSE = "</conversation>";
const ARTIFACTS: SummaryHeading = "Artifacts & references";

/** One line under a heading. `age` 0 is the newest block; previous-summary items are older still. */
type Item = {
  text: string;
  age: number;
  /** Seen only in tool output: such identifiers are many and go first when space is short. */
  weak: boolean;
};

type Sections = Record<SummaryHeading, Item[]>;

/** A summarizer call names all six headings, in order, in its instructions. */
export function isSummarizerCall(prompt: LanguageModelV4Prompt): boolean {
  return prompt.some((message) => {
    if (message.role !== "system") return false;
    let from = 0;
    for (const heading of SUMMARY_HEADINGS) {
      const at = message.content.indexOf(`## ${heading}`, from);
      if (at < 0) return false;
      from = at + heading.length;
    }
    return true;
  });
}

/**
 * The summary for a summarizer call, at most `maxTokens` (and never more than
 * its input) as `countText` counts: every heading always, the oldest items
 * dropped first when it would not fit.
 */
export function composeSummary(
  prompt: LanguageModelV4Prompt,
  maxTokens: number,
  countText: (text: string) => number,
): string {
  const text = latestUserText(prompt);
  const previous = PREVIOUS_PATTERN.exec(text)?.[1]?.trim() ?? "";
  const open = text.indexOf(CONVERSATION_OPEN, text.indexOf("</previous-summary>") + 1);
  const close = text.lastIndexOf(CONVERSATION_CLOSE);
  const conversation =
    open >= 0 && close > open ? text.slice(open + CONVERSATION_OPEN.length, close).trim() : "";

  const sections = mergeSections(spanSections(parseSpan(conversation)), previousSections(previous));
  const limit = Math.min(maxTokens, countText(previous) + countText(conversation));
  return fitToLimit(sections, limit, countText);
}

/** What the span adds, newest first in every section. */
function spanSections(blocks: readonly SpanBlock[]): Sections {
  const sections = emptySections();
  const add = (heading: SummaryHeading, texts: readonly string[], age: number, weak = false) => {
    for (const text of texts) sections[heading].push({ text, age, weak });
  };
  blocks.forEach((block, index) => {
    const age = blocks.length - 1 - index;
    if (block.role === "user") {
      add("Goal & open requests", [firstLine(block.prose) ?? ""].filter(Boolean), age);
      add("Constraints & preferences", constraintsOf(block.prose), age);
    }
    if (block.role === "assistant") add("Decisions & facts", factsOf(block.prose), age);
    add("Artifacts & references", artifactsOf(block.prose), age);
    for (const tool of block.tools) {
      add("Artifacts & references", artifactsOf(tool.body), age, tool.kind === "result");
      if (tool.kind === "error") add("Errors & fixes", [errorOf(tool)], age);
    }
  });
  // Only the last conclusion is the current state.
  const last = blocks.findLast((b) => b.role === "assistant" && conclusionOf(b.prose));
  if (last) add("Current state & next step", [conclusionOf(last.prose) ?? ""], 0);
  for (const heading of SUMMARY_HEADINGS) sections[heading].sort((a, b) => a.age - b.age);
  return sections;
}

/** The previous summary's items under each heading, older than anything in the span. */
function previousSections(previous: string): Sections {
  const sections = emptySections();
  let current: SummaryHeading | null = null;
  for (const line of previous.split("\n")) {
    if (/^\s*#{1,6}\s/.test(line) || headingOf(line)) {
      current = headingOf(line); // Fold's own "Verbatim references" section is not carried here
      continue;
    }
    const text = line
      .trim()
      .replace(/^(?:[-*+]|\d+[.)])\s+/, "")
      .trim();
    if (!current || !text || EMPTY_MARKERS.has(text.toLowerCase())) continue;
    sections[current].push({ text, age: 0, weak: false });
  }
  return sections;
}

/** The span's items first (newer wins), then the previous summary's, without duplicates. */
function mergeSections(fresh: Sections, previous: Sections): Sections {
  const oldest = Math.max(0, ...SUMMARY_HEADINGS.flatMap((h) => fresh[h].map((i) => i.age))) + 1;
  const merged = emptySections();
  for (const heading of SUMMARY_HEADINGS) {
    // A new current state replaces the old one; the other sections accumulate.
    const carried =
      heading === "Current state & next step" && fresh[heading].length > 0 ? [] : previous[heading];
    const items = [
      ...fresh[heading],
      ...carried.map((item, position) => ({ ...item, age: oldest + position })),
    ];
    const byKey = new Map<string, Item>();
    for (const item of items) {
      const key = item.text.replace(/\s+/g, " ").trim();
      const seen = byKey.get(key);
      if (seen) seen.weak &&= item.weak;
      else byKey.set(key, { ...item, text: key });
    }
    merged[heading] = [...byKey.values()];
  }
  return merged;
}

/**
 * The rendered summary with as many items as fit in `limit`. Items leave in a
 * fixed order — tool-output-only identifiers, then oldest, then the later
 * section — and the fewest removals that fit are found by bisection.
 */
function fitToLimit(
  sections: Sections,
  limit: number,
  countText: (text: string) => number,
): string {
  const dropOrder = SUMMARY_HEADINGS.flatMap((heading, rank) =>
    sections[heading].map((item, position) => ({ item, rank, position })),
  ).sort(
    (a, b) =>
      Number(b.item.weak) - Number(a.item.weak) ||
      b.item.age - a.item.age ||
      b.rank - a.rank ||
      b.position - a.position,
  );
  const render = (dropped: number) => {
    const gone = new Set(dropOrder.slice(0, dropped).map((d) => d.item));
    return renderSummary(sections, (item) => !gone.has(item));
  };
  if (countText(render(0)) <= limit) return render(0);
  let low = 1; // known not to fit: low - 1
  let high = dropOrder.length; // everything dropped: the skeleton, the floor
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    if (countText(render(mid)) <= limit) high = mid;
    else low = mid + 1;
  }
  return render(low);
}

function renderSummary(sections: Sections, keep: (item: Item) => boolean): string {
  const kept = (heading: SummaryHeading) => sections[heading].filter(keep).map((i) => i.text);
  // An identifier already quoted in another section is not listed twice.
  const elsewhere = SUMMARY_HEADINGS.filter((h) => h !== ARTIFACTS).flatMap(kept);
  return SUMMARY_HEADINGS.map((heading) => {
    const texts =
      heading === ARTIFACTS
        ? kept(heading).filter((value) => !elsewhere.some((text) => text.includes(value)))
        : kept(heading);
    const body = texts.length > 0 ? texts.map((text) => `- ${text}`).join("\n") : NOTHING_RECORDED;
    return `## ${heading}\n${body}`;
  }).join("\n\n");
}

function emptySections(): Sections {
  return Object.fromEntries(SUMMARY_HEADINGS.map((h) => [h, [] as Item[]])) as Sections;
}

function latestUserText(prompt: LanguageModelV4Prompt): string {
  const user = prompt.findLast((message) => message.role === "user");
  if (user?.role !== "user") return "";
  return user.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}
