import type { Heading, Nodes, Root } from "mdast";
import type { TextEdit } from "./markdown-edits";

/** Markdown has six heading levels: one already at the last stays there. */
const DEEPEST_HEADING = 6;

/**
 * Edits that move the text's headings down so that its top ones sit one level below a heading
 * of `parentDepth` that the text is placed under (a summary's `## Goal` under the export's
 * `## Summary…` becomes `### Goal`), keeping how they nest among themselves. Headings are found
 * in its tree (`tree` is `text` parsed) as a CommonMark parser finds them, so a `#` line in a
 * code block stays as it is; everything but the headings' marks is left as written.
 */
export function headingEdits(tree: Root, text: string, parentDepth: number): TextEdit[] {
  const headings: Heading[] = [];
  const walk = (node: Nodes) => {
    if (node.type === "heading") headings.push(node);
    if ("children" in node) for (const child of node.children) walk(child);
  };
  walk(tree);
  if (headings.length === 0) return [];
  const shift = parentDepth + 1 - Math.min(...headings.map((h) => h.depth));
  if (shift <= 0) return [];

  return headings.flatMap((heading): TextEdit[] => {
    const start = heading.position?.start.offset;
    if (start === undefined) return [];
    const depth = Math.min(DEEPEST_HEADING, heading.depth + shift);
    // `## Goal`: more marks in front; a closing `##` may stay any length.
    if (text.startsWith("#", start)) {
      return [{ at: start, end: start, put: "#".repeat(depth - heading.depth) }];
    }
    return setextAsAtx(text, heading, depth);
  });
}

/**
 * A setext heading (its text underlined with `===` or `---`, which can say only levels 1 and 2)
 * written with `#` marks at `depth`: its lines joined into one, as it renders anyway.
 */
function setextAsAtx(text: string, heading: Heading, depth: number): TextEdit[] {
  const start = heading.position?.start.offset;
  const end = heading.position?.end.offset;
  const from = heading.children[0]?.position?.start.offset;
  const to = heading.children.at(-1)?.position?.end.offset;
  if (start === undefined || end === undefined || from === undefined || to === undefined) {
    return [];
  }
  const marks = "#".repeat(depth);
  const edits: TextEdit[] = [{ at: start, end: from, put: `${marks} ` }];
  // A line break in a quote or list goes on past its marks.
  const lineBreak = /\n[ \t>]*/g;
  const content = text.slice(from, to);
  for (const found of content.matchAll(lineBreak)) {
    edits.push({ at: from + found.index, end: from + found.index + found[0].length, put: " " });
  }
  // A `#` run at the end would read as the closing marks and be dropped: a closing run keeps it.
  const endsInMarks = /(^|[ \t])#+$/.test(content.replace(lineBreak, " "));
  // The underline goes.
  edits.push({ at: to, end, put: endsInMarks ? ` ${marks}` : "" });
  return edits;
}
