/** How much of a page fetch_url parses at most (page-text.ts). */

/**
 * Elements of a page read at most. Parsing and Readability run on the server's one thread at
 * tens of µs per element, so a crafted page of a few hundred thousand (2 MB of `<p>a</p>`) held
 * every user's requests for seconds. Real articles hold a few thousand; the model is shown at
 * most 20,000 characters of text anyway.
 */
export const MAX_PAGE_ELEMENTS = 20_000;

/**
 * The page up to its MAX_PAGE_ELEMENTS-th element's tag, when it has more (the parser closes
 * what is left open). Counted on the text, before any parse: a `<` and a letter inside a
 * script or a comment counts too, so such a page is cut a little early, never late.
 */
export function firstElements(html: string): { html: string; cut: boolean } {
  const tag = /<[a-zA-Z]/g;
  for (let seen = 0; tag.exec(html) !== null; ) {
    seen++;
    if (seen > MAX_PAGE_ELEMENTS) return { html: html.slice(0, tag.lastIndex - 2), cut: true };
  }
  return { html, cut: false };
}
