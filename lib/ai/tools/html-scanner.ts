import { decodeEntities } from "./html-entities";

/**
 * The lexical half of html-to-text: finds tags, comments and attribute values
 * in a linear scan, tolerant of the malformed markup real pages are made of.
 * No regex here can backtrack badly on hostile input.
 */

/** Elements whose content is not markup; skipped up to their closing tag. */
export const RAW_TEXT = new Set([
  "script",
  "style",
  "title",
  "textarea",
  "iframe",
  "noscript",
  "noembed",
  "noframes",
  "xmp",
]);
/** Elements that never have content or a closing tag. */
export const VOID = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "link",
  "meta",
  "param",
  "source",
  "track",
  "wbr",
]);
const TAG_NAME = /[a-zA-Z][a-zA-Z0-9:-]*/y;
const ATTRIBUTE = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;

export type Tag =
  | { kind: "open"; name: string; attrs: string; selfClosing: boolean; end: number }
  | { kind: "close"; name: string; end: number }
  | { kind: "comment"; end: number };

/** The tag starting at `lt`, or null when that `<` is plain text. */
export function readTag(html: string, lt: number): Tag | null {
  const after = html[lt + 1];
  const skipTo = (terminator: string, from: number): number => {
    const at = html.indexOf(terminator, from);
    return at === -1 ? html.length : at + terminator.length;
  };
  if (html.startsWith("<!--", lt)) return { kind: "comment", end: skipTo("-->", lt + 4) };
  if (after === "!" || after === "?") return { kind: "comment", end: skipTo(">", lt) };
  const closing = after === "/";
  TAG_NAME.lastIndex = lt + (closing ? 2 : 1);
  const name = TAG_NAME.exec(html)?.[0].toLowerCase();
  if (!name) return closing ? { kind: "comment", end: skipTo(">", lt) } : null;
  if (closing) return { kind: "close", name, end: skipTo(">", TAG_NAME.lastIndex) };

  // Walk attributes so a `>` inside a quoted value does not end the tag.
  let i = TAG_NAME.lastIndex;
  while (i < html.length && html[i] !== ">") {
    if (html[i] !== "=") {
      i++;
      continue;
    }
    i++;
    while (/\s/.test(html[i] ?? "")) i++;
    const quote = html[i];
    if (quote === '"' || quote === "'") {
      const close = html.indexOf(quote, i + 1);
      i = close === -1 ? html.length : close + 1;
    }
  }
  if (i >= html.length) return { kind: "comment", end: html.length }; // unterminated tag at EOF
  const attrs = html.slice(TAG_NAME.lastIndex, i);
  return { kind: "open", name, attrs, selfClosing: attrs.trimEnd().endsWith("/"), end: i + 1 };
}

export function attribute(attrs: string, wanted: string): string | undefined {
  for (const match of attrs.matchAll(ATTRIBUTE))
    if (match[1]?.toLowerCase() === wanted)
      return decodeEntities(match[2] ?? match[3] ?? match[4] ?? "");
  return undefined;
}

/** Closing tag of a raw-text element: `[start, end)` of `</name ...>`, or the end of input. */
export function findClose(
  html: string,
  name: string,
  from: number,
): { start: number; end: number } {
  const pattern = new RegExp(`</${name}(?=[\\s/>])`, "gi");
  pattern.lastIndex = from;
  const match = pattern.exec(html);
  if (!match) return { start: html.length, end: html.length };
  const gt = html.indexOf(">", match.index);
  return { start: match.index, end: gt === -1 ? html.length : gt + 1 };
}
