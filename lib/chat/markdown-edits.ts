import type { Root } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";

/** GFM's syntax (footnotes, tables; a heading can sit in a footnote), made once, not per text. */
const WITH_GFM = { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] };

/** A Markdown text as a GFM viewer reads it: parsed once, every edit to it found in this tree. */
export function parseMarkdown(text: string): Root {
  return fromMarkdown(text, WITH_GFM);
}

/** `put` written in place of the text's characters from `at` to `end` (none: an insertion). */
export type TextEdit = { at: number; end: number; put: string };

/**
 * The text with its edits made, everything else as written. The edits do not overlap, but an
 * insertion may stand where a replacement starts: it goes in front of what replaces.
 */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  if (edits.length === 0) return text;
  const inOrder = [...edits].sort((a, b) => a.at - b.at || a.end - b.end);
  let out = "";
  let from = 0;
  for (const edit of inOrder) {
    out += text.slice(from, edit.at) + edit.put;
    from = edit.end;
  }
  return out + text.slice(from);
}
