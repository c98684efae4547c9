/**
 * "Notes you added": the section of a summary that holds lines the user wrote — kept there by a
 * rollback past their edit (lib/chat/invalidate.ts), or written under that heading by the user.
 * Like the reference ledger, Fold carries it itself: a fold takes it out before the summarizer
 * (or the fallback digest) rewrites the rest and puts it back after, as written, so no fold
 * merges, rewords or drops what the user wrote.
 */

export const USER_NOTES_HEADING = "## Notes you added";

/**
 * The user's notes are kept word for word up to this share of the summary budget; a fold hands
 * older notes beyond it to the summarizer with the previous narrative, to be condensed rather
 * than dropped (fold.ts). Adding a note refuses to go past it (lib/chat/memory.ts).
 */
const USER_NOTES_MAX_SHARE = 0.25;

/** Tokens of notes a fold keeps word for word, for a summary budget. */
export const notesCapacity = (summaryBudget: number) =>
  Math.floor(USER_NOTES_MAX_SHARE * summaryBudget);

/** A note's line as a fold weighs it against that room: its text and its line break. */
export const noteLineCost = (line: string, countText: (text: string) => number) =>
  countText(line) + 1;

/**
 * What `notes` take of that room, as a fold counts it: the heading, then each line. Notes that
 * take no more than `notesCapacity` all pass a fold as written.
 */
export function notesCost(notes: readonly string[], countText: (text: string) => number): number {
  return notes.reduce(
    (sum, line) => sum + noteLineCost(line, countText),
    countText(USER_NOTES_HEADING),
  );
}

/** What an edit that adds or takes away one note says in its event and its timeline entry. */
export const NOTE_ADDED = "note added by user";
export const NOTE_REMOVED = "note removed by user";

/** A line as compared: trimmed, its runs of whitespace made one space. */
export const lineKey = (line: string) => line.trim().replace(/\s+/g, " ");
export const isHeading = (key: string) => /^#{1,6}\s/.test(key);

/** A note as the user wrote it: its line without the list bullet the section gives it. */
export const noteText = (line: string) => line.replace(/^\s*[-*]\s+/, "");

/** The heading however the user typed it: any level, any case, a colon or not. */
const NOTES_HEADING = /^#{1,6}\s*notes you added\s*:?$/i;
const FENCE = /^(```|~~~)/;

/**
 * Every "Notes you added" section of `lines`: its heading's index and the next heading's. A `#`
 * line inside a code fence (a shell comment) does not end it.
 */
function notesSections(lines: readonly string[]): { heading: number; end: number }[] {
  const sections: { heading: number; end: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!NOTES_HEADING.test(lineKey(lines[i] ?? ""))) continue;
    let end = i + 1;
    let fenced = false;
    for (; end < lines.length; end++) {
      const key = lineKey(lines[end] ?? "");
      if (FENCE.test(key)) fenced = !fenced;
      else if (!fenced && isHeading(key)) break;
    }
    sections.push({ heading: i, end });
    i = end - 1;
  }
  return sections;
}

/**
 * The notes of `lines`' sections, in order, as written (trailing spaces dropped): a line an
 * earlier section holds is not repeated by a later one, blank lines only between notes and one
 * at a time.
 */
function notesOf(lines: readonly string[], sections: readonly { heading: number; end: number }[]) {
  // Lines an earlier section holds; within a section every line stays (a code block's fences).
  const seen = new Set<string>();
  const notes: string[] = [];
  for (const { heading, end } of sections) {
    const own: string[] = [];
    for (const raw of lines.slice(heading + 1, end)) {
      const line = raw.trimEnd();
      const key = lineKey(line);
      if (key === "") {
        if ((own.length > 0 || notes.length > 0) && (own.at(-1) ?? notes.at(-1)) !== "")
          own.push("");
        continue;
      }
      if (seen.has(key)) continue;
      own.push(line);
    }
    for (const line of own) seen.add(lineKey(line));
    notes.push(...own);
  }
  while (notes.at(-1) === "") notes.pop();
  return notes;
}

/** The lines of `summary`'s "Notes you added" sections. */
export function notesIn(summary: string | null): string[] {
  const lines = (summary ?? "").split("\n");
  return notesOf(lines, notesSections(lines));
}

/**
 * `summary` without its "Notes you added" sections, and their notes (notesOf). A summary without
 * one comes back unchanged, with no notes.
 */
export function splitUserNotes(summary: string | null): { rest: string | null; notes: string[] } {
  if (!summary) return { rest: summary, notes: [] };
  const lines = summary.split("\n");
  const sections = notesSections(lines);
  if (sections.length === 0) return { rest: summary, notes: [] };
  const rest = lines.filter((_, i) => !sections.some((s) => i >= s.heading && i < s.end));
  return { rest: rest.join("\n").trim(), notes: notesOf(lines, sections) };
}

/** A line that reads as the notes' heading or a label of it: `## Notes you added`, `**Notes you added:**`… */
const NOTES_LABEL = /^[#*_\s]*notes you added[\s*_:]*$/i;

/**
 * `text` without a line that reads as the notes' heading or a label of it: what the summarizer
 * or a digest writes (from a page or a tool's output, say) never opens, or passes for, the
 * section the model is told the user wrote.
 */
export function withoutNotesHeadings(text: string): string {
  return text
    .split("\n")
    .filter((line) => !NOTES_LABEL.test(line.trim()))
    .join("\n");
}

/**
 * Whether `summary` tells nothing of the chat: none, or the user's notes alone. Such a summary
 * covers no message, so it goes with no watermark (every message is then sent as written).
 */
export function summarizesNothing(summary: string | null): boolean {
  return !splitUserNotes(summary).rest;
}

/**
 * `summary` with `lines` added to its notes: at the end of its first "Notes you added" section
 * when it has one, else under that heading after it.
 */
export function withUserNotes(summary: string | null, lines: readonly string[]): string | null {
  if (lines.length === 0) return summary;
  const own = (summary ?? "").split("\n");
  const [section] = notesSections(own);
  if (section) {
    let { end } = section;
    while (end > section.heading + 1 && lineKey(own[end - 1] ?? "") === "") end -= 1;
    return [...own.slice(0, end), ...lines, ...own.slice(end)].join("\n");
  }
  const notes = `${USER_NOTES_HEADING}\n${lines.join("\n")}`;
  return summary?.trim() ? `${summary.trimEnd()}\n\n${notes}` : notes;
}
