/**
 * The reference ledger (DESIGN §16): the exact values the conversation relied
 * on — URLs, paths, hashes, numbers with units, code, the user's quoted
 * constraints — kept by Fold itself, not by the summarizer. It is rendered as
 * the summary's "Verbatim references" section, parsed back at the next
 * compaction, and merged with what the newly folded messages add, so it
 * survives any number of chained compactions and any summarizer failure.
 */
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { type IdentifierKind, type IdentifierOrigin, identifierOccurrences } from "./identifiers";
import { VERBATIM_REFERENCES_HEADING } from "./prompts";
import { splitUserNotes, withUserNotes } from "./user-notes";

export type LedgerEntry = {
  value: string;
  kind: IdentifierKind;
  /** The most telling place it was seen: the user's words outrank the assistant's, then tools'. */
  origin: IdentifierOrigin;
  /** Message numbers (1-based, in the stored chat) of its first and latest mention. */
  first: number;
  last: number;
  mentions: number;
};

/** Eviction order, first to go first (DESIGN §16): tool output nobody mentioned again, then arguments, then the assistant's, the user's last. */
const ORIGIN_RANK: Record<IdentifierOrigin, number> = {
  "tool-result": 0,
  "tool-args": 1,
  assistant: 2,
  user: 3,
};

const ORIGIN_LABEL: Record<IdentifierOrigin, string> = {
  user: "From the user:",
  assistant: "From the assistant:",
  "tool-args": "From tool calls:",
  "tool-result": "From tool results:",
};
/** One line telling the model what the list is and what the brackets mean. */
const LEGEND = "_Exact values, kept by Fold [message first-last xmentions]_";
/** Labels of summaries written before the ledger had origins. */
const LEGACY_LABELS = new Map<string, IdentifierOrigin>([
  ["Said by the user:", "user"],
  ["From the conversation:", "assistant"],
]);

const SECTION_HEADING = new RegExp(`^#{1,6}\\s*${VERBATIM_REFERENCES_HEADING}\\s*(?::\\s*)?$`, "i");
const BULLET = /^[-*]\s+/;
/** An entry's closing "[first-last xmentions]", at the end of the line. */
const ENTRY_BRACKET = /\s\[(\d+)(?:-(\d+))?(?:\s+x(\d+))?\]$/;

/**
 * A bullet line's value and its bracket's numbers, as [value, first, last, mentions]: found
 * from the line's end rather than by one pattern over it (which, on a value holding a long run
 * of spaces, tried every way to split the run: seconds for a line the summary editor accepts).
 */
function entryOf(line: string): [string, string?, string?, string?] | null {
  const bullet = BULLET.exec(line);
  if (!bullet) return null;
  const body = line.slice(bullet[0].length);
  const bracket = ENTRY_BRACKET.exec(body);
  const value = bracket ? body.slice(0, bracket.index).trimEnd() : body;
  if (value === "") return null;
  return bracket ? [value, bracket[1], bracket[2], bracket[3]] : [value];
}

/**
 * A summary split into the narrative the summarizer wrote and the ledger Fold kept. Lines in the
 * ledger's section that are not its own (a note the user added there when editing the summary)
 * belong to the narrative: read as entries, or skipped, they would be lost at the next fold.
 */
export function splitSummary(summary: string | null): { narrative: string; ledger: LedgerEntry[] } {
  if (!summary) return { narrative: "", ledger: [] };
  const lines = summary.split("\n");
  const start = lines.findIndex((line) => SECTION_HEADING.test(line.trim()));
  if (start === -1) return { narrative: summary.trim(), ledger: [] };
  let end = start + 1;
  while (end < lines.length && !/^#{1,6}\s/.test(lines[end] ?? "")) end += 1;
  const { entries, notes } = parseEntries(lines.slice(start + 1, end));
  const narrative = [...lines.slice(0, start), ...notes, ...lines.slice(end)].join("\n").trim();
  return { narrative, ledger: entries };
}

/**
 * The ledger section's entries, and the lines that are not the ledger's. Since the legend came
 * in, every entry Fold writes ends in its "[message…]" bracket, so a bullet without one is a
 * note; in a ledger written before (no legend) every bullet is an entry.
 */
function parseEntries(lines: readonly string[]): { entries: LedgerEntry[]; notes: string[] } {
  const entries: LedgerEntry[] = [];
  const notes: string[] = [];
  const bracketed = lines.some((line) => line.trim() === LEGEND);
  let origin: IdentifierOrigin = "assistant";
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "" || line === LEGEND) continue;
    const labelled =
      (Object.entries(ORIGIN_LABEL).find(([, label]) => label === line)?.[0] as
        | IdentifierOrigin
        | undefined) ?? LEGACY_LABELS.get(line);
    if (labelled) {
      origin = labelled;
      continue;
    }
    const match = entryOf(line);
    if (!match || (bracketed && match[1] === undefined)) {
      notes.push(raw);
      continue;
    }
    let value = match[0].replace(/^`([^`]+)`$/, "$1");
    let kind: IdentifierKind = "code";
    const quoted = /^"([^"]+)"$/.exec(value);
    if (origin === "user" && quoted?.[1]) {
      value = quoted[1];
      kind = "quote";
    }
    const first = Number(match[1] ?? 0);
    entries.push({
      value,
      kind,
      origin,
      first,
      last: Number(match[2] ?? first),
      mentions: Number(match[3] ?? 1),
    });
  }
  return { entries, notes };
}

/**
 * The previous ledger with the identifiers of newly folded messages merged in:
 * counts add up, the latest mention moves forward, and an identifier a user
 * repeats becomes the user's. `positions[i]` is span message i's number.
 */
export function mergeLedger(
  previous: readonly LedgerEntry[],
  span: readonly FoldUIMessage[],
  positions: readonly number[],
): LedgerEntry[] {
  const byValue = new Map<string, LedgerEntry>(previous.map((e) => [e.value, { ...e }]));
  span.forEach((message, index) => {
    const position = positions[index] ?? 0;
    for (const { value, kind, origin } of identifierOccurrences(message)) {
      const known = byValue.get(value);
      if (!known) {
        byValue.set(value, { value, kind, origin, first: position, last: position, mentions: 1 });
        continue;
      }
      known.mentions += 1;
      known.last = Math.max(known.last, position);
      if (ORIGIN_RANK[origin] > ORIGIN_RANK[known.origin]) known.origin = origin;
      if (kind === "quote") known.kind = "quote";
    }
  });
  return [...byValue.values()];
}

export type FittedLedger = {
  entries: LedgerEntry[];
  /** The rendered section, "" when nothing is kept. */
  text: string;
  tokens: number;
  dropped: number;
};

/**
 * Keeps the ledger within `maxTokens`, evicting in DESIGN §16's order, oldest
 * first within a class, the user's quoted constraints after their other values. The user's own values may go on to `userMaxTokens`
 * (the rest of the ledger then gets nothing): what the user said outranks
 * the narrative's room, not only the other origins.
 */
export function fitLedger(
  ledger: readonly LedgerEntry[],
  maxTokens: number,
  countTokens: (text: string) => number,
  userMaxTokens = maxTokens,
): FittedLedger {
  // Within the user's, their quoted constraints go last: a pasted log's hundred newer paths
  // must not push out the rule they stated before it.
  const quoted = (e: LedgerEntry) => (e.origin === "user" && e.kind === "quote" ? 1 : 0);
  const byKeepPriority = [...ledger].sort(
    (a, b) =>
      ORIGIN_RANK[b.origin] - ORIGIN_RANK[a.origin] ||
      quoted(b) - quoted(a) ||
      b.last - a.last ||
      b.mentions - a.mentions ||
      a.value.localeCompare(b.value),
  );
  const kept: LedgerEntry[] = [];
  let used = countTokens(renderLedger([])) + countTokens(Object.values(ORIGIN_LABEL).join("\n"));
  const ceiling = (entry: LedgerEntry) =>
    entry.origin === "user" ? Math.max(maxTokens, userMaxTokens) : maxTokens;
  for (const entry of byKeepPriority) {
    const cost = countTokens(`${entryLine(entry)}\n`);
    if (used + cost > ceiling(entry)) break; // strictly in eviction order: nothing ranked lower gets in
    kept.push(entry);
    used += cost;
  }
  // Per-line counts approximate the whole; make the ceiling exact, dropping the least kept first.
  let text = renderLedger(kept);
  const limit = () =>
    kept.some((e) => e.origin !== "user") ? maxTokens : Math.max(maxTokens, userMaxTokens);
  while (kept.length > 0 && countTokens(text) > limit()) {
    kept.pop();
    text = renderLedger(kept);
  }
  return {
    entries: kept,
    text,
    tokens: kept.length > 0 ? countTokens(text) : 0,
    dropped: ledger.length - kept.length,
  };
}

/** The "Verbatim references" section: by origin, the user's first, each group in the order first seen. */
export function renderLedger(entries: readonly LedgerEntry[]): string {
  if (entries.length === 0) return "";
  const lines = [`## ${VERBATIM_REFERENCES_HEADING}`, LEGEND];
  for (const origin of ["user", "assistant", "tool-args", "tool-result"] as const) {
    const group = entries
      .filter((e) => e.origin === origin)
      .sort((a, b) => a.first - b.first || a.value.localeCompare(b.value));
    if (group.length > 0) lines.push(ORIGIN_LABEL[origin], ...group.map(entryLine));
  }
  return lines.join("\n");
}

function entryLine(entry: LedgerEntry): string {
  const value = entry.kind === "quote" ? `"${entry.value}"` : entry.value;
  const span = entry.last > entry.first ? `${entry.first}-${entry.last}` : `${entry.first}`;
  const mentions = entry.mentions > 1 ? ` x${entry.mentions}` : "";
  return `- ${value} [${span}${mentions}]`;
}

/**
 * A summary as a new chat continued from it starts with: its ledger's values placed before the
 * new chat's first message (position 0). Their positions were the old chat's, far beyond the
 * new chat's first ones: kept as they were, they would outrank everything the new chat says
 * until it grew as long, and its own values would be the first evicted.
 */
export function carriedSummary(summary: string): string {
  // The user's notes stay the summary's last section, as every fold leaves them.
  const { rest, notes } = splitUserNotes(summary);
  const { narrative, ledger } = splitSummary(rest);
  if (ledger.length === 0) return summary;
  const carried = joinSummary(
    narrative,
    renderLedger(ledger.map((e) => ({ ...e, first: 0, last: 0 }))),
  );
  return withUserNotes(carried, notes) ?? carried;
}

/**
 * A narrative without any section under the ledger's heading: the ledger is Fold's to write.
 * A summarizer that writes one itself (its instructions name the section) would leave two, and
 * the next fold would read the first, the model's, as the ledger: Fold's entries would sink
 * into the narrative, and whatever the model put under "From the user" would rank as the user's.
 */
export function withoutLedgerSection(narrative: string): string {
  const lines = narrative.split("\n");
  const kept: string[] = [];
  let inLedger = false;
  for (const line of lines) {
    if (/^#{1,6}\s/.test(line.trim())) inLedger = SECTION_HEADING.test(line.trim());
    if (!inLedger) kept.push(line);
  }
  return kept.join("\n");
}

/** The narrative and the ledger as one summary text, the form stored and sent. */
export function joinSummary(narrative: string, ledgerText: string): string {
  return [narrative.trim(), ledgerText].filter(Boolean).join("\n\n");
}
