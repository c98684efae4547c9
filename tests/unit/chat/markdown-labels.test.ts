import { micromark } from "micromark";
import { gfm, gfmHtml } from "micromark-extension-gfm";
import { describe, expect, it } from "vitest";
import { applyEdits, parseMarkdown } from "@/lib/chat/markdown-edits";
import { labelEdits } from "@/lib/chat/markdown-labels";

const ownLabels = (text: string, prefix: string) =>
  applyEdits(text, labelEdits(parseMarkdown(text), text, prefix));

const html = (markdown: string) =>
  micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()] });

/** Two replies, each defining the same labels its own way, in one document. */
const FIRST = [
  "See the spec [1] and [the guide][g], or [docs][]. Also a note.[^1]",
  "",
  "[1]: https://one.example/spec",
  "[g]: https://one.example/guide",
  "[docs]: https://one.example/docs",
  "",
  "[^1]: The first reply's note.",
].join("\n");
const SECOND = [
  "> Quoted [1], and an image ![logo][].",
  "",
  "- a list item [g]",
  "",
  "```",
  "[1] in code stays as it is",
  "```",
  "",
  "Its own note.[^1]",
  "",
  "  [1]: https://two.example/spec",
  "[G]: https://two.example/guide",
  "[logo]: https://two.example/logo.png",
  "",
  "[^1]: The second reply's note.",
].join("\n");

describe("a reply's references in a document of many replies", () => {
  it("lead to the reply's own definitions, not the first reply's", () => {
    const document = html(`${ownLabels(FIRST, "r1-")}\n\n---\n\n${ownLabels(SECOND, "r2-")}`);
    const [first = "", second = ""] = document.split("<hr />");
    expect(first).toContain('<a href="https://one.example/spec">1</a>');
    expect(first).toContain('<a href="https://one.example/guide">the guide</a>');
    expect(first).toContain('<a href="https://one.example/docs">docs</a>');
    expect(second).toContain('<a href="https://two.example/spec">1</a>');
    expect(second).toContain('<a href="https://two.example/guide">g</a>');
    expect(second).toContain('<img src="https://two.example/logo.png" alt="logo" />');
    expect(second).toContain("[1] in code stays as it is");
    expect(second).not.toContain("one.example");
    // Each footnote call leads to its own reply's note.
    expect(document).toContain("The first reply's note.");
    expect(document).toContain("The second reply's note.");
    const calls = [...document.matchAll(/<sup><a href="#user-content-fn-([^"]+)"/g)].map(
      (m) => m[1],
    );
    expect(new Set(calls).size).toBe(2);
  });

  it("leaves a reply without definitions as it is, brackets and all", () => {
    const text = "An array a[1] and a [checkbox] with [link](https://x.example).";
    expect(ownLabels(text, "r1-")).toBe(text);
  });
});
