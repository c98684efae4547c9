import { decodeEntities } from "./html-entities";
import { attribute, findClose, RAW_TEXT, readTag, type Tag, VOID } from "./html-scanner";
import { HTML_WHITESPACE, TextBuilder, tidy } from "./text-builder";

/**
 * HTML to plain text a model can read: headings as `#` lines, paragraphs
 * separated by blank lines, list items as bullets, links as `text (url)`,
 * scripts, styles, navigation and other boilerplate dropped. A linear scan
 * (html-scanner.ts) rather than a DOM: pages arrive malformed and capped at a
 * few MB, and no new dependency is needed for what a model reads.
 */

export type HtmlText = { title?: string; text: string };

/** Boilerplate or non-text elements dropped with everything inside them. */
const DROPPED = new Set([
  "nav",
  "aside",
  "footer",
  "svg",
  "math",
  "template",
  "object",
  "canvas",
  "select",
  "button",
  "dialog",
]);
const PARAGRAPHS = new Set(["p", "blockquote", "pre", "table", "dl", "figure", "hr"]);
const LINES = new Set([
  "div",
  "section",
  "article",
  "header",
  "main",
  "li",
  "tr",
  "dt",
  "dd",
  "figcaption",
  "details",
  "summary",
  "form",
  "fieldset",
  "legend",
  "caption",
  "address",
]);
/** Longer link targets are noise for the model; the link text is kept alone. */
const MAX_LINK_URL_CHARS = 200;

const isHidden = (attrs: string) =>
  /\bhidden\b/i.test(attrs) &&
  (attribute(attrs, "hidden") !== undefined || attribute(attrs, "aria-hidden") === "true");

class Converter {
  readonly out = new TextBuilder();
  title: string | undefined;
  private drop: { name: string; depth: number } | null = null;
  private readonly lists: { ordered: boolean; next: number }[] = [];
  private link: { href: string | null; start: number } | null = null;
  private cells = 0;
  private preDepth = 0;
  private preStart = false;
  private main = { count: 0, start: 0, end: 0 };

  constructor(private readonly baseUrl: string | undefined) {}

  text(chunk: string): void {
    if (this.drop) return;
    const text = decodeEntities(chunk);
    if (this.preDepth === 0) {
      this.out.inline(text);
      return;
    }
    // HTML ignores a newline right after <pre>.
    this.out.raw(this.preStart ? text.replace(/^\r?\n/, "") : text);
    this.preStart = false;
  }

  rawText(name: string, content: string): void {
    if (name === "title" && !this.drop && this.title === undefined)
      this.title = decodeEntities(content).replace(HTML_WHITESPACE, " ").trim() || undefined;
  }

  tag(tag: Tag): void {
    if (tag.kind === "comment") return;
    if (this.drop) {
      if (tag.name !== this.drop.name) return;
      if (tag.kind === "close") this.drop.depth--;
      else if (!tag.selfClosing) this.drop.depth++;
      if (this.drop.depth === 0) this.drop = null;
      return;
    }
    if (tag.kind === "close") {
      this.close(tag.name);
      return;
    }
    const opensContent = !VOID.has(tag.name) && !tag.selfClosing;
    if (opensContent && (DROPPED.has(tag.name) || isHidden(tag.attrs)))
      this.drop = { name: tag.name, depth: 1 };
    else this.open(tag.name, tag.attrs);
  }

  private open(name: string, attrs: string): void {
    const heading = /^h([1-6])$/.exec(name);
    if (heading) {
      this.out.block(2);
      this.out.marker(`${"#".repeat(Number(heading[1]))} `);
    } else if (name === "ul" || name === "ol") {
      this.out.block(this.lists.length > 0 ? 1 : 2);
      const start = Number.parseInt(attribute(attrs, "start") ?? "1", 10);
      this.lists.push({ ordered: name === "ol", next: Number.isFinite(start) ? start : 1 });
    } else if (name === "li") {
      this.out.block(1);
      const list = this.lists.at(-1);
      const bullet = list?.ordered ? `${list.next++}. ` : "- ";
      this.out.marker("  ".repeat(Math.max(0, this.lists.length - 1)) + bullet);
    } else if (name === "br") this.out.lineBreak();
    else if (name === "td" || name === "th") {
      if (this.cells++ > 0) this.out.marker("| ", true);
    } else if (name === "a") {
      this.link = { href: this.resolveLink(attribute(attrs, "href")), start: this.out.mark() };
    } else if (PARAGRAPHS.has(name)) this.out.block(2);
    else if (LINES.has(name)) this.out.block(1);

    if (name === "tr") this.cells = 0;
    if (name === "pre") {
      this.preDepth++;
      this.preStart = true;
    }
    if (name === "main" && this.main.count++ === 0) this.main.start = this.out.mark();
  }

  private close(name: string): void {
    if (/^h[1-6]$/.test(name) || PARAGRAPHS.has(name)) this.out.end(2);
    else if (name === "ul" || name === "ol") {
      this.lists.pop();
      this.out.end(this.lists.length > 0 ? 1 : 2);
    } else if (name === "a") this.closeLink();
    else if (LINES.has(name)) this.out.end(1);

    if (name === "pre") this.preDepth = Math.max(0, this.preDepth - 1);
    if (name === "main") this.main.end = this.out.mark();
  }

  private resolveLink(href: string | undefined): string | null {
    if (!href || href.startsWith("#")) return null;
    try {
      const url = new URL(href.trim(), this.baseUrl);
      if (url.protocol !== "http:" && url.protocol !== "https:") return null;
      if (url.href.length > MAX_LINK_URL_CHARS) return null;
      return url.href;
    } catch {
      return null;
    }
  }

  private closeLink(): void {
    const link = this.link;
    this.link = null;
    if (!link?.href) return;
    const label = this.out.slice(link.start).trim();
    if (label && !label.includes(link.href)) this.out.append(` (${link.href})`);
  }

  finish(): HtmlText {
    const { count, start, end } = this.main;
    const main = count === 1 && end > start ? tidy(this.out.slice(start, end)) : "";
    const text = main || tidy(this.out.slice(0));
    return this.title === undefined ? { text } : { title: this.title, text };
  }
}

/**
 * Converts an HTML document to readable text and its `<title>`. `baseUrl`
 * resolves relative links; without it only absolute links are kept.
 */
export function htmlToText(html: string, options: { baseUrl?: string } = {}): HtmlText {
  const converter = new Converter(options.baseUrl);
  let pos = 0;
  while (pos < html.length) {
    const lt = html.indexOf("<", pos);
    const textEnd = lt === -1 ? html.length : lt;
    if (textEnd > pos) converter.text(html.slice(pos, textEnd));
    if (lt === -1) break;

    const tag = readTag(html, lt);
    if (!tag) {
      converter.text("<");
      pos = lt + 1;
      continue;
    }
    pos = tag.end;
    if (tag.kind === "open" && RAW_TEXT.has(tag.name) && !tag.selfClosing) {
      const close = findClose(html, tag.name, pos);
      converter.rawText(tag.name, html.slice(pos, close.start));
      pos = close.end;
    } else converter.tag(tag);
  }
  return converter.finish();
}
