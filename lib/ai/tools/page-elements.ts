/** How much of a page fetch_url parses at most (page-text.ts). */

/**
 * Markup of a page read at most, in elements. Parsing and Readability run on the server's one
 * thread at tens of µs per element, so a crafted page of a few hundred thousand (2 MB of
 * `<p>a</p>`) held every user's requests for seconds. Real articles hold a few thousand; the
 * model is shown at most 20,000 characters of text anyway.
 *
 * Attributes and character references cost the parse as well (measured with linkedom and
 * Readability: an attribute about as much as an element, a reference about half as much), so
 * each counts against the same budget: 2 MB of `&amp;` inside one `<p>`, or of attributes on
 * one tag, held the thread for 4–6 s while counting one element (0.3 s and 0.01 s now). The
 * largest real documents tried (rustdoc pages of 0.3–1.9 MB) read in 0.1–0.45 s, the biggest
 * cut where their text is far past the 20,000 characters the model is shown.
 *
 * An end tag with nothing of its name open makes an element of its own (each stray `</p>` of
 * 2 MB of `a</p>` did: 90 s of parsing), and such an element with the text around it costs the
 * parse and Readability about twice a paragraph's: it counts as two. Attributes begin after a
 * `/` or a closing quote as after a space (`<p/a/b>`, `<p a=""b="">`).
 */
export const MAX_PAGE_ELEMENTS = 20_000;

/** What a character reference (`&amp;`, `&#39;`) costs the parse, in elements. */
const REFERENCE_COST = 0.5;
/** What an end tag that closes nothing costs, in elements. */
const STRAY_END_TAG_COST = 2;

/**
 * The page up to where its markup reaches MAX_PAGE_ELEMENTS (its elements, their attributes
 * and its character references), when it has more (the parser closes what is left open), and
 * how many elements that is. Counted on the text in one pass, before any parse: a `<` and a
 * letter inside a script or a comment counts as an element and a `&` as a reference, so such a
 * page is cut a little early, never late.
 */
export function firstElements(html: string): { html: string; cut: boolean; elements: number } {
  let spent = 0;
  let elements = 0;
  let inEndTag = false;
  // Start tags of each name not closed yet (some close by themselves: never fewer than open).
  const open = new Map<string, number>();
  let tagStart = -1;
  let quote = "";
  // Inside a tag, whether the last character other than a space was `=`: only a value opens
  // with a quote (one elsewhere, as in `<p a'b>`, is part of a name).
  let afterEquals = false;
  // Inside an unquoted value (`href=/a/b`): a `/` or a quote there is part of it.
  let unquoted = false;
  for (let i = 0; i < html.length; i++) {
    const c = html.charCodeAt(i);
    if (tagStart === -1) {
      if (c === LT && opensTag(html, i + 1)) {
        tagStart = i;
        afterEquals = false;
        unquoted = false;
        inEndTag = html.charCodeAt(i + 1) === SLASH;
        const name = tagName(html, i + (inEndTag ? 2 : 1));
        const opened = open.get(name) ?? 0;
        if (inEndTag) {
          if (opened > 0) open.set(name, opened - 1);
          else spent += STRAY_END_TAG_COST;
          i++; // its `/`: not an attribute's
        } else {
          open.set(name, opened + 1);
          elements++;
          spent++;
        }
      } else if (c === AMP) spent += REFERENCE_COST;
    } else if (quote) {
      if (html[i] === quote) {
        quote = "";
        if (startsAttribute(html.charCodeAt(i + 1))) spent++;
      } else if (c === AMP) spent += REFERENCE_COST;
    } else if (unquoted) {
      if (c === GT) tagStart = -1;
      else if (c === AMP) spent += REFERENCE_COST;
      else if (isSpace(c)) {
        unquoted = false;
        if (startsAttribute(html.charCodeAt(i + 1))) spent++;
      }
    } else if ((c === QUOTE || c === APOSTROPHE) && afterEquals) {
      quote = html[i] ?? "";
      afterEquals = false;
    } else if (c === GT) {
      tagStart = -1;
    } else if (isSpace(c) || c === SLASH) {
      if (!afterEquals && startsAttribute(html.charCodeAt(i + 1))) spent++;
    } else {
      if (c === AMP) spent += REFERENCE_COST;
      if (afterEquals) {
        unquoted = true;
        afterEquals = false;
      } else afterEquals = c === EQUALS;
    }
    if (spent > MAX_PAGE_ELEMENTS) {
      // Cut before the tag it happened in (or at the reference), and without it.
      const end = tagStart === -1 ? i : tagStart;
      const counted = tagStart === -1 || inEndTag ? elements : elements - 1;
      return { html: html.slice(0, end), cut: true, elements: counted };
    }
  }
  return { html, cut: false, elements };
}

const LT = 0x3c;
const GT = 0x3e;
const AMP = 0x26;
const QUOTE = 0x22;
const APOSTROPHE = 0x27;
const SLASH = 0x2f;
const EQUALS = 0x3d;

/** A tag's name from `at` (its first letter), lower-cased: letters, digits and `-`. */
function tagName(html: string, at: number): string {
  let end = at;
  while (end < html.length && isNameChar(html.charCodeAt(end))) end++;
  return html.slice(at, end).toLowerCase();
}

function isNameChar(c: number): boolean {
  return isLetter(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d;
}

/** Whether a `<` at `at - 1` opens a tag: a start tag's letter, or an end tag's `/` and letter. */
function opensTag(html: string, at: number): boolean {
  const c = html.charCodeAt(at);
  return isLetter(c) || (c === SLASH && isLetter(html.charCodeAt(at + 1)));
}

function isLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
}

/** Whether a character after a space inside a tag begins an attribute's name. */
function startsAttribute(c: number): boolean {
  return !Number.isNaN(c) && !isSpace(c) && c !== GT && c !== SLASH && c !== EQUALS;
}
