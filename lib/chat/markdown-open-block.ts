import type { Nodes as MdastNode, Root as MdastRoot } from "mdast";

/** A fenced code block's fence: three or more backticks or tildes. */
const FENCE_MARKS = /^(`{3,}|~{3,})/;

/**
 * The raw HTML blocks CommonMark ends only at their own closer, not at a blank line (its kinds
 * 1 to 5), by how they open: left open, the next messages and the summary are inside them.
 */
const HTML_BLOCK_CLOSERS: ReadonlyArray<[opens: RegExp, closer: (open: string) => string]> = [
  [/^<(script|pre|style|textarea)(?=[\s>]|$)/i, (open) => `</${open.slice(1).toLowerCase()}>`],
  [/^<!--/, () => "-->"],
  [/^<\?/, () => "?>"],
  [/^<!\[CDATA\[/, () => "]]>"],
  [/^<![A-Za-z]/, () => ">"],
];

/**
 * The text with the fenced code block or raw HTML block it ends inside closed, as a CommonMark
 * parser reads it (`tree` is `text` parsed): a fence is closed only by its own kind, as long or
 * longer, and a list item ends at a line indented less than its content, so a fence there
 * opens a new block. What closes it goes after the text's end, so edits found in the tree still
 * fit.
 */
export function closeOpenBlock(tree: MdastRoot, text: string): string {
  const open = blockLeftOpen(tree, text);
  // Closed where it opened: inside its list item, which the next message's rule then ends.
  return open === null ? text : `${text}\n${" ".repeat(open.column)}${open.closer}`;
}

/** The block the text's last block ends open in, and what closes it; a quote's closes on its own. */
function blockLeftOpen(tree: MdastRoot, text: string): { closer: string; column: number } | null {
  let node: MdastNode | undefined = tree.children.at(-1);
  while (node) {
    // The next message's lines are not quoted: the quote, and a block in it, ends before them.
    if (node.type === "blockquote") return null;
    if (node.type === "html") return htmlLeftOpen(node.value, node.position?.start.column);
    if (node.type === "code") {
      const start = node.position?.start;
      const end = node.position?.end;
      if (start?.offset === undefined || end?.offset === undefined) return null;
      const lines = text.slice(start.offset, end.offset).split("\n");
      const marks = FENCE_MARKS.exec(lines[0] ?? "")?.[1];
      // An indented block ends at the next line that is not.
      if (!marks) return null;
      const last = lines.length > 1 ? lines[lines.length - 1]?.trim() : undefined;
      const closed =
        last !== undefined &&
        FENCE_MARKS.test(last) &&
        last[0] === marks[0] &&
        last.length >= marks.length &&
        new Set(last).size === 1;
      return closed ? null : { closer: marks, column: start.column - 1 };
    }
    node = "children" in node ? node.children.at(-1) : undefined;
  }
  return null;
}

/** A raw HTML block's closer when it is of a kind a blank line does not end and it lacks one. */
function htmlLeftOpen(
  value: string,
  column: number | undefined,
): { closer: string; column: number } | null {
  for (const [opens, closerOf] of HTML_BLOCK_CLOSERS) {
    const open = opens.exec(value)?.[0];
    if (open === undefined) continue;
    const closer = closerOf(open);
    const rest = value.slice(open.length);
    const closed = /^<\//.test(closer)
      ? rest.toLowerCase().includes(closer)
      : rest.includes(closer);
    return closed ? null : { closer, column: (column ?? 1) - 1 };
  }
  return null;
}
