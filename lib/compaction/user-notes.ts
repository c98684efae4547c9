/**
 * "Notes you added": the section of a summary that holds lines the user wrote — kept there by a
 * rollback past their edit (lib/chat/invalidate.ts), or written under that heading by the user.
 * Like the reference ledger, Fold carries it itself: a fold takes it out before the summarizer
 * (or the fallback digest) rewrites the rest and puts it back after, word for word, so no fold
 * merges, rewords or drops what the user wrote.
 */

export const USER_NOTES_HEADING = "## Notes you added";

/** A line as compared: trimmed, its runs of whitespace made one space. */
export const lineKey = (line: string) => line.trim().replace(/\s+/g, " ");
export const isHeading = (key: string) => /^#{1,6}\s/.test(key);

/** Where the "Notes you added" section of `lines` is: its heading's index and the next heading's. */
export function notesSection(lines: readonly string[]): { heading: number; end: number } | null {
  const heading = lines.findIndex((line) => lineKey(line) === USER_NOTES_HEADING);
  if (heading === -1) return null;
  const next = lines.findIndex((line, i) => i > heading && isHeading(lineKey(line)));
  return { heading, end: next === -1 ? lines.length : next };
}

/** The lines of `summary`'s "Notes you added" section, as written. */
export function notesIn(summary: string | null): string[] {
  const lines = (summary ?? "").split("\n");
  const section = notesSection(lines);
  return section ? lines.slice(section.heading + 1, section.end) : [];
}

/**
 * `summary` without its "Notes you added" section, and that section's non-empty lines (trimmed).
 * A summary without the section comes back unchanged, with no notes.
 */
export function splitUserNotes(summary: string | null): { rest: string | null; notes: string[] } {
  if (!summary) return { rest: summary, notes: [] };
  const lines = summary.split("\n");
  const section = notesSection(lines);
  if (!section) return { rest: summary, notes: [] };
  const notes = lines
    .slice(section.heading + 1, section.end)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const rest = [...lines.slice(0, section.heading), ...lines.slice(section.end)].join("\n").trim();
  return { rest, notes };
}

/**
 * `summary` with `lines` added to its notes: at the end of its "Notes you added" section when it
 * has one, else under that heading after it.
 */
export function withUserNotes(summary: string | null, lines: readonly string[]): string | null {
  if (lines.length === 0) return summary;
  const own = (summary ?? "").split("\n");
  const section = notesSection(own);
  if (section) {
    let { end } = section;
    while (end > section.heading + 1 && lineKey(own[end - 1] ?? "") === "") end -= 1;
    return [...own.slice(0, end), ...lines, ...own.slice(end)].join("\n");
  }
  const notes = `${USER_NOTES_HEADING}\n${lines.join("\n")}`;
  return summary?.trim() ? `${summary.trimEnd()}\n\n${notes}` : notes;
}
