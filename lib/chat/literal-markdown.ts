/**
 * Plain text as Markdown that shows it as written. The chat shows a user's message as typed —
 * its line breaks kept, nothing formatted — so its export must not turn "# not a heading" into
 * a heading, "1) apples" into a list or "__init__" into bold. A backslash before ASCII
 * punctuation is always that character in CommonMark: the characters that open or close
 * inline syntax are escaped wherever they are, those that open a block only at a line's
 * start; leading spaces (four open a code block) become no-break spaces; and every line break
 * inside a paragraph is a hard one.
 */
const INLINE_SYNTAX = /[\\`*_[\]<>&#|~!]/g;
/** A bullet, a setext underline or a thematic break by its first mark, after any indent. */
const BLOCK_START = /^(\s*)([-+=])/;
/** An ordered list item: its number's `.` or `)`. */
const ORDERED_MARK = /^(\s*\d+)([.)])/;
const LEADING_SPACES = /^ +/;

export function literalMarkdown(text: string): string {
  const lines = text.split("\n").map((line) =>
    line
      .replace(INLINE_SYNTAX, "\\$&")
      .replace(ORDERED_MARK, "$1\\$2")
      .replace(BLOCK_START, "$1\\$2")
      .replace(LEADING_SPACES, (spaces) => "\u00a0".repeat(spaces.length)),
  );
  return lines
    .map((line, i) => {
      const next = lines[i + 1];
      // A line followed by another in the same paragraph keeps its break.
      return next !== undefined && line.trim() !== "" && next.trim() !== "" ? `${line}\\` : line;
    })
    .join("\n");
}
