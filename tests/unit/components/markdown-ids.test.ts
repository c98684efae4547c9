import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Markdown } from "@/components/chat/message/markdown";

/**
 * A reply (steered by a fetched page, say) may carry raw HTML. Whatever ids it writes must not
 * reach the page: an element id is a property of `window` (named access), and one named as
 * Fold's own (the skip link's `#composer`) takes its place.
 */
const render = (text: string) =>
  renderToStaticMarkup(createElement(Markdown, { text, streaming: false }));

describe("assistant Markdown", () => {
  it.each([
    ['<div id="composer">a fake composer</div>', "composer"],
    ['<div id="__NEXT_CLIENT_RESUME">x</div>', "__NEXT_CLIENT_RESUME"],
    [
      '<p name="TURBOPACK_ASSET_SUFFIX" id="TURBOPACK_ASSET_SUFFIX">x</p>',
      "TURBOPACK_ASSET_SUFFIX",
    ],
  ])("plants no id or name of its own: %s", (markdown, id) => {
    const html = render(markdown);
    expect(html).toContain(">");
    expect(html).not.toMatch(new RegExp(`\\s(id|name)="${id}"`));
  });

  it("keeps the text around them, and GFM footnotes with their own ids and links", () => {
    expect(render('<div id="composer">a fake composer</div>')).toContain("a fake composer");
    const html = render("A claim.[^1]\n\n[^1]: The source.");
    expect(html).toContain('id="user-content-fn-1"');
    expect(html).toContain('href="#user-content-fn-1"');
  });
});
