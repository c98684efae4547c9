import type { Paragraph, PhrasingContent, RootContent } from "mdast";
import { gfmToMarkdown } from "mdast-util-gfm";
import { toMarkdown } from "mdast-util-to-markdown";

/**
 * Plain text as Markdown that shows it as written. The chat shows a user's message as typed —
 * its line breaks kept, nothing formatted — so its export must not turn "# not a heading" into
 * a heading, "1) apples" into a list, "__init__" into bold or the rest of a line into a link
 * address, nor lose a line's indentation. The text becomes a document of plain text nodes — a
 * paragraph per run of lines between blank ones, each line break in it a hard break, a line's
 * leading spaces and tabs no-break spaces (a viewer drops ordinary ones at a line's start) —
 * that mdast-util-to-markdown, told GFM's syntax, writes with whatever would read as syntax
 * where it stands escaped.
 */
export function literalMarkdown(text: string): string {
  const paragraphs: Paragraph[] = [];
  let lines: string[] = [];
  for (const line of [...text.split("\n"), ""]) {
    if (line.trim() !== "") {
      lines.push(line);
      continue;
    }
    if (lines.length > 0) paragraphs.push(paragraphOf(lines));
    lines = [];
  }
  return written(paragraphs);
}

/** A title as a top-level heading that shows it as written (a closing "#" is text, too). */
export function literalHeading(title: string): string {
  return written([{ type: "heading", depth: 1, children: [{ type: "text", value: title }] }]);
}

/** GFM's syntax, so its marks are escaped too: made once, not per message. */
const WITH_GFM = { extensions: [gfmToMarkdown()] };

function written(children: RootContent[]): string {
  return toMarkdown({ type: "root", children }, WITH_GFM).trimEnd();
}

/** Columns a tab at a line's start stands for. */
const TAB_COLUMNS = 4;
const NO_BREAK_SPACE = "\u00a0";

/** A line with its indentation in no-break spaces, which a Markdown viewer keeps. */
const indentKept = (line: string) =>
  line.replace(/^[ \t]+/, (indent) =>
    indent.replace(/ /g, NO_BREAK_SPACE).replace(/\t/g, NO_BREAK_SPACE.repeat(TAB_COLUMNS)),
  );

function paragraphOf(lines: readonly string[]): Paragraph {
  return {
    type: "paragraph",
    children: lines.flatMap((line, i): PhrasingContent[] => {
      const text: PhrasingContent = { type: "text", value: indentKept(line) };
      return i === 0 ? [text] : [{ type: "break" }, text];
    }),
  };
}
