import type { Heading, Nodes } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";

/** GFM's syntax (a heading can sit in a footnote), made once rather than per export. */
const WITH_GFM = { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] };

/** Markdown has six heading levels: one already at the last stays there. */
const DEEPEST_HEADING = 6;

/**
 * The text's headings moved down so that its top ones sit one level below a heading of
 * `parentDepth` that the text is placed under (a summary's `## Goal` under the export's
 * `## Summary…` becomes `### Goal`), keeping how they nest among themselves. Headings are found as a
 * CommonMark parser finds them, so a `#` line in a code block stays as it is; everything but the
 * headings' marks is left as written.
 */
export function nestHeadings(text: string, parentDepth: number): string {
  const headings: Heading[] = [];
  const walk = (node: Nodes) => {
    if (node.type === "heading") headings.push(node);
    if ("children" in node) for (const child of node.children) walk(child);
  };
  walk(fromMarkdown(text, WITH_GFM));
  if (headings.length === 0) return text;
  const shift = parentDepth + 1 - Math.min(...headings.map((h) => h.depth));
  if (shift <= 0) return text;

  let out = text;
  // From the end, so each edit leaves the offsets of those before it as they were.
  for (const heading of headings.reverse()) {
    const start = heading.position?.start.offset;
    const end = heading.position?.end.offset;
    if (start === undefined || end === undefined) continue;
    const depth = Math.min(DEEPEST_HEADING, heading.depth + shift);
    const source = text.slice(start, end);
    const nested = source.startsWith("#")
      ? // `## Goal`: more marks in front; a closing `##` may stay any length.
        "#".repeat(depth - heading.depth) + source
      : atxOfSetext(setextText(text, heading), depth);
    out = out.slice(0, start) + nested + out.slice(end);
  }
  return out;
}

/**
 * A setext heading (its text underlined with `===` or `---`, which can say only levels 1 and 2)
 * written with `#` marks at `depth`: its lines joined into one, as it renders anyway.
 */
function atxOfSetext(content: string, depth: number): string {
  // A `#` run at the end would read as the closing marks and be dropped: a closing run keeps it.
  const closing = /(^|[ \t])#+$/.test(content) ? ` ${"#".repeat(depth)}` : "";
  return `${"#".repeat(depth)} ${content}${closing}`;
}

/** A setext heading's text on one line: a line break in a quote or list goes on past its marks. */
function setextText(text: string, heading: Heading): string {
  const from = heading.children[0]?.position?.start.offset ?? 0;
  const to = heading.children.at(-1)?.position?.end.offset ?? 0;
  return text.slice(from, to).replace(/\n[ \t>]*/g, " ");
}
