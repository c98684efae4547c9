import { micromark } from "micromark";
import { gfm, gfmHtml } from "micromark-extension-gfm";
import { describe, expect, it } from "vitest";
import { literalMarkdown } from "@/lib/chat/literal-markdown";

/** What a Markdown viewer shows of it: the rendered HTML's text, its hard breaks as line breaks. */
function shown(markdown: string): { html: string; text: string } {
  const html = micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()] });
  const text = html
    .replace(/<br \/>\n?/g, "\n")
    .replace(/<\/p>\n<p>/g, "\n\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\u00a0/g, " ")
    .trim();
  return { html, text };
}

describe("a user's text in the Markdown export", () => {
  it("renders as typed: no heading, list, emphasis, code, link, table or quote of its own", () => {
    const typed = [
      "My list:",
      "1) apples",
      "2. pears",
      "- not a bullet",
      "# not a heading",
      "> not a quote",
      "run __init__.py now, *twice*",
      "    four spaces, not code",
      "`tick` [link](http://x.example) <b>bold</b> &amp; a|b ~~no~~ !",
      "===",
      "",
      "C:\\path\\to\\file",
    ].join("\n");
    const { html, text } = shown(literalMarkdown(typed));
    expect(html).not.toMatch(/<(h\d|ol|ul|li|em|strong|code|pre|blockquote|table|del|b)\b/);
    // A bare address may become a link (GFM's autolinks), the [text](address) form may not.
    expect(html).not.toContain('<a href="http://x.example">link</a>');
    expect(text).toBe(typed);
  });
});
