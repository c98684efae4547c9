import { micromark } from "micromark";
import { describe, expect, it } from "vitest";
import { applyEdits, parseMarkdown } from "@/lib/chat/markdown-edits";
import { headingEdits } from "@/lib/chat/markdown-headings";

/** The text with its headings' edits applied. */
const nestHeadings = (text: string, parentDepth: number) =>
  applyEdits(text, headingEdits(parseMarkdown(text), text, parentDepth));

/** The heading levels a CommonMark renderer (micromark, not Fold's code) shows, in order. */
const levels = (markdown: string) =>
  [...micromark(markdown).matchAll(/<h(\d)>([^<]*)<\/h\d>/g)].map((m) => `h${m[1]} ${m[2]}`);

describe("headings nested under a heading of the document they are placed in", () => {
  it("move the text's top headings one level below it, keeping how the rest nest under them", () => {
    const text = "## Goal\nShip it.\n\n### Detail\nSoon.\n\n## Decisions ##\n- None.";
    expect(nestHeadings(text, 2)).toBe(
      "### Goal\nShip it.\n\n#### Detail\nSoon.\n\n### Decisions ##\n- None.",
    );
    // A text whose top heading is `#` moves as far as it takes.
    expect(levels(nestHeadings("# One\n\n## Two", 2))).toEqual(["h3 One", "h4 Two"]);
  });

  it("leave a text already below the heading, one with no heading, and `#` lines in code as they are", () => {
    expect(nestHeadings("### Goal\nShip it.", 2)).toBe("### Goal\nShip it.");
    expect(nestHeadings("Just a paragraph.", 2)).toBe("Just a paragraph.");
    const fenced = "## Steps\n\n```sh\n## a shell comment\n```";
    expect(nestHeadings(fenced, 2)).toBe("### Steps\n\n```sh\n## a shell comment\n```");
  });

  it("stop at the sixth level, the last Markdown has", () => {
    expect(levels(nestHeadings("## Top\n\n###### Deepest", 2))).toEqual(["h3 Top", "h6 Deepest"]);
  });

  it("write an underlined heading with marks at its new level, its text kept", () => {
    const text = "Goal\n====\n\nShip it.\n\n> Quoted\n> heading #\n> ---";
    expect(levels(nestHeadings(text, 2))).toEqual(["h3 Goal", "h4 Quoted heading #"]);
  });
});
