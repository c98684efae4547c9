import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { headOf } from "@/lib/message/unstorable-text";
import { firstElements, MAX_PAGE_ELEMENTS } from "./page-elements";

/**
 * HTML to plain text a model can read. linkedom parses the page (entities,
 * malformed markup), Readability picks the article out of the page around it,
 * and a short walk over the result writes headings as `#` lines, paragraphs
 * separated by blank lines, list items as bullets, table rows as `a | b` and
 * links as `text (url)`. A page Readability finds no article in is read whole,
 * minus the same boilerplate; a page with a single `<main>` is read from there.
 */

/**
 * `cutAtElements`: the page held more markup than is read (MAX_PAGE_ELEMENTS: its elements,
 * their attributes and its character references), and only its first that many elements were.
 */
export type PageText = { title?: string; text: string; cutAtElements?: number };

export { MAX_PAGE_ELEMENTS };

/** Never text for the model: code, styling, chrome and widgets. */
const SKIPPED = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "nav",
  "aside",
  "footer",
  "svg",
  "math",
  "object",
  "canvas",
  "select",
  "button",
  "dialog",
  "iframe",
  "img",
  "head",
  "title",
]);
/** Blocks separated from their neighbours by a blank line. */
const PARAGRAPHS = new Set(["p", "blockquote", "table", "dl", "figure", "hr", "form", "fieldset"]);
/** Blocks that start on a new line. */
const LINES = new Set([
  "div",
  "section",
  "article",
  "header",
  "main",
  "ul",
  "ol",
  "tr",
  "dt",
  "dd",
  "figcaption",
  "details",
  "summary",
  "address",
]);
/** Link targets longer than this are noise to a model; the label alone is kept. */
const MAX_LINK_URL_CHARS = 500;
/** A page's title is a line, not a body: the rest of a longer one is dropped. */
export const MAX_TITLE_CHARS = 300;
/**
 * Elements nested deeper than this are read as their flat text: the walk recurses per level,
 * and a page of thousands of nested tags would otherwise overflow the stack.
 */
const MAX_NESTING = 200;

class TextWriter {
  private out = "";
  private line = "";
  private prefix = "";
  /** Newlines owed before the next block: 1 for a new line, 2 for a new paragraph. */
  private gap = 0;
  /** How many elements the walk is inside now. */
  private nesting = 0;
  /** Items of each numbered list numbered so far: one pass over a list, however long. */
  private readonly numbered = new Map<Element, number>();

  constructor(private readonly baseUrl?: string) {}

  /** Ends the current line of inline text and asks for at least `gap` newlines before the next. */
  private flush(gap = 1): void {
    const text = this.line
      .split("\n")
      .map((l) => l.replace(/[ \t]+/g, " ").trim())
      .join("\n")
      .trim();
    if (text) this.push(this.prefix + text);
    this.line = "";
    this.prefix = "";
    this.gap = Math.max(this.gap, gap);
  }

  private push(text: string): void {
    if (this.out) this.out += "\n".repeat(Math.max(1, this.gap));
    this.out += text;
    this.gap = 0;
  }

  walk(node: Node, depth = 0, raw = false): void {
    if (node.nodeType === 3) {
      const value = node.nodeValue ?? "";
      this.line += raw ? value : value.replace(/\s+/g, " ");
      return;
    }
    if (node.nodeType !== 1) return;
    const el = node as Element;
    const name = el.localName;
    if (SKIPPED.has(name) || el.hasAttribute("hidden") || el.getAttribute("aria-hidden") === "true")
      return;
    if (name === "br") this.line += "\n";
    else if (name === "pre") {
      this.flush(2);
      const code = (el.textContent ?? "").replace(/^\n/, "").replace(/\s+$/, "");
      if (code) this.push(code);
      this.gap = 2;
    } else if (/^h[1-6]$/.test(name)) {
      this.flush(2);
      this.children(el, depth, raw);
      this.line = `${"#".repeat(Number(name[1]))} ${this.line.trim()}`;
      this.flush(2);
    } else if (name === "li") this.listItem(el, depth);
    else if (name === "tr") this.row(el, depth);
    else if (name === "a") this.link(el, depth, raw);
    else if (PARAGRAPHS.has(name) || LINES.has(name)) {
      // A list inside a list item continues it; anywhere else it is a paragraph of its own.
      const gap = PARAGRAPHS.has(name) || ((name === "ul" || name === "ol") && depth === 0) ? 2 : 1;
      this.flush(gap);
      this.children(el, depth, raw);
      this.flush(gap);
    } else this.children(el, depth, raw);
  }

  private children(el: Element, depth: number, raw: boolean): void {
    if (this.nesting >= MAX_NESTING) {
      this.line += (el.textContent ?? "").replace(/\s+/g, " ");
      return;
    }
    this.nesting += 1;
    for (const child of Array.from(el.childNodes)) this.walk(child, depth, raw);
    this.nesting -= 1;
  }

  private listItem(el: Element, depth: number): void {
    this.flush();
    const list = el.parentElement;
    let marker = "- ";
    if (list?.localName === "ol") {
      const start = Number.parseInt(list.getAttribute("start") ?? "1", 10);
      const index = this.numbered.get(list) ?? 0;
      this.numbered.set(list, index + 1);
      marker = `${(Number.isNaN(start) ? 1 : start) + index}. `;
    }
    const indent = "  ".repeat(depth);
    this.prefix = indent + marker;
    if (this.nesting >= MAX_NESTING) {
      this.children(el, depth, false);
      this.flush();
      return;
    }
    this.nesting += 1;
    for (const child of Array.from(el.childNodes)) {
      const nested = child.nodeType === 1 && /^(ul|ol)$/.test((child as Element).localName);
      if (nested) {
        this.flush();
        this.walk(child, depth + 1);
      } else this.walk(child, depth);
    }
    this.nesting -= 1;
    this.flush();
  }

  private row(el: Element, depth: number): void {
    this.flush();
    const cells: string[] = [];
    for (const cell of Array.from(el.children)) {
      if (cell.localName !== "td" && cell.localName !== "th") continue;
      this.children(cell, depth, false);
      cells.push(this.line.replace(/\s+/g, " ").trim());
      this.line = "";
    }
    this.line = cells.join(" | ");
    this.flush();
  }

  private link(el: Element, depth: number, raw: boolean): void {
    const start = this.line.length;
    this.children(el, depth, raw);
    const href = this.absolute(el.getAttribute("href"));
    const label = this.line.slice(start).trim();
    if (href && label && !label.includes(href)) this.line += ` (${href})`;
  }

  /** http(s) links only, resolved against the page; in-page anchors and scripts are dropped. */
  private absolute(href: string | null): string | null {
    if (!href || href.trim().startsWith("#")) return null;
    try {
      const url = new URL(href.trim(), this.baseUrl);
      if (url.protocol !== "http:" && url.protocol !== "https:") return null;
      return url.href.length > MAX_LINK_URL_CHARS ? null : url.href;
    } catch {
      return null;
    }
  }

  finish(): string {
    this.flush();
    return this.out;
  }
}

function textOf(root: Node, baseUrl?: string): string {
  const writer = new TextWriter(baseUrl);
  writer.walk(root);
  return writer.finish();
}

/**
 * Whether a page opens with its own `<html>` element: after a byte-order mark, whitespace, a
 * doctype, an XML declaration and comments, before any other tag. One pass, no backtracking:
 * the page is whatever a URL served.
 */
function opensWithHtml(html: string): boolean {
  let at = html.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (at < html.length && /\s/.test(html.charAt(at))) at += 1;
    if (html.startsWith("<!--", at)) {
      const end = html.indexOf("-->", at + 4);
      if (end === -1) return false;
      at = end + 3;
    } else if (html.startsWith("<!", at) || html.startsWith("<?", at)) {
      const end = html.indexOf(">", at);
      if (end === -1) return false;
      at = end + 1;
    } else {
      return /^<html[\s>]/i.test(html.slice(at, at + 6));
    }
  }
}

/**
 * linkedom builds a document only from a page that opens with an `<html>` element; anything
 * else (a fragment, or a page that leaves the optional tag out) is wrapped in one.
 */
function parse(html: string) {
  return parseHTML(opensWithHtml(html) ? html : `<!doctype html><html><body>${html}</body></html>`);
}

/**
 * Whether elements nest deeper than MAX_NESTING under `root`, found without recursion.
 * Readability recurses per level (a page of thousands of nested tags overflows its stack, and
 * deep nesting costs it far more than linear time), so such a page is read whole instead.
 */
function nestsTooDeep(root: Element): boolean {
  const stack: Array<[Element, number]> = [[root, 0]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [element, depth] = next;
    if (depth > MAX_NESTING) return true;
    for (let child = element.firstElementChild; child; child = child.nextElementSibling)
      stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Where a page's text lives: its body, or the whole document when the body is empty. A page
 * without a `<body>` tag is legal HTML, but linkedom then builds an empty body and leaves the
 * content beside it, under the document element.
 */
function contentRoot(document: Document): Element {
  const body = document.body;
  return body?.textContent?.trim() ? body : document.documentElement;
}

/** Readability's article as text, or "" when it finds none (or cannot read the page). */
function articleText(document: Document, baseUrl?: string): string {
  if (nestsTooDeep(contentRoot(document))) return "";
  try {
    const article = new Readability(document, { serializer: (node) => node }).parse();
    return article?.content ? textOf(article.content, baseUrl) : "";
  } catch {
    return "";
  }
}

/** The `<title>` and readable text of an HTML document; `baseUrl` resolves relative links. */
export function pageText(whole: string, options: { baseUrl?: string } = {}): PageText {
  const { html, cut, elements } = firstElements(whole);
  const { document } = parse(html);
  const title = document.querySelector("title")?.textContent?.replace(/\s+/g, " ").trim();
  const found = {
    ...(title ? { title: headOf(title, MAX_TITLE_CHARS) } : {}),
    ...(cut ? { cutAtElements: elements } : {}),
  };
  // A page that marks its one main region says where its content is; otherwise Readability looks.
  const mains = document.querySelectorAll("main");
  const main = mains.length === 1 ? mains[0] : undefined;
  if (main) return { ...found, text: textOf(main, options.baseUrl) };
  const text = articleText(document as unknown as Document, options.baseUrl);
  if (text) return { ...found, text };
  // Readability edits the document it reads, so the whole-page fallback reads a second parse.
  const root = contentRoot(parse(html).document as unknown as Document);
  return { ...found, text: textOf(root, options.baseUrl) };
}
