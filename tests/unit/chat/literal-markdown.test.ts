import { micromark } from "micromark";
import { gfm, gfmHtml } from "micromark-extension-gfm";
import { describe, expect, it } from "vitest";
import { literalMarkdown } from "@/lib/chat/literal-markdown";

/**
 * What a Markdown viewer shows of it: the rendered HTML's text, its hard breaks as line breaks,
 * as a browser lays out a paragraph: ordinary spaces and tabs at a line's start are dropped and
 * a run of them within it is one space; no-break spaces stay.
 */
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
    .split("\n")
    .map((line) =>
      line
        .replace(/[ \t]+/g, " ")
        .replace(/^ /, "")
        .trimEnd(),
    )
    .join("\n")
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

  it("keeps each line's indentation, spaces and tabs", () => {
    const typed = "def f():\n    return 1\n\tdone";
    const text = shown(literalMarkdown(typed)).text;
    expect(text).toBe("def f():\n    return 1\n    done");
  });

  it("keeps a web address and what follows it as typed (a GFM autolink reads no escapes)", () => {
    const typed = "see https://example.com/a_b_c and www.example.org/x*y* then *twice*";
    expect(shown(literalMarkdown(typed)).text).toBe(typed);
  });

  it("shows any mix of Markdown's marks, spaces and blank lines as typed", () => {
    // Deterministic pseudo-random texts from pieces that open or close Markdown syntax; what a
    // viewer shows must be the text, its blank-line runs as one blank line, spaces at a line's
    // end aside (a viewer drops them).
    const pieces = [
      "a",
      " ",
      "  ",
      "\t",
      "\n",
      "\n\n",
      "#",
      "*",
      "_",
      "-",
      "+",
      "=",
      "1.",
      "2)",
      ">",
      "<",
      "`",
      "~",
      "|",
      "[",
      "]",
      "(",
      ")",
      "!",
      "&",
      "\\",
      ":",
      "http://x.example",
      "<b>",
      "&amp;",
      "    ",
      "```",
      "---",
      "[^1]",
      "www.x.example",
      "a@b.example",
    ];
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    // What the chat shows of it, as a browser lays out a paragraph: a line keeps its
    // indentation (a tab four columns), a run of spaces or tabs within it is one space.
    const view = (text: string) =>
      text
        .split("\n")
        .map((line) => {
          const indent = (/^[ \t]*/.exec(line)?.[0] ?? "").replace(/\t/g, "    ");
          const rest = line
            .trimStart()
            .replace(/[ \t]+/g, " ")
            .trimEnd();
          return rest === "" ? "" : indent + rest;
        })
        .join("\n");
    const differing: string[] = [];
    for (let n = 0; n < 1_500; n++) {
      let typed = "";
      for (let i = 0, length = 1 + Math.floor(next() * 12); i < length; i++) {
        typed += pieces[Math.floor(next() * pieces.length)];
      }
      if (typed.trim() === "") continue;
      const expected = view(
        typed.replace(/\n[ \t]*\n(\s*\n)*/g, "\n\n").replace(/^\s*\n/, ""),
      ).trim();
      if (shown(literalMarkdown(typed)).text !== expected) differing.push(typed);
    }
    expect(differing).toEqual([]);
  });
});
