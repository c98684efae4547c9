import { describe, expect, it } from "vitest";
import {
  artifactsOf,
  conclusionOf,
  constraintsOf,
  factsOf,
  firstLine,
  parseSpan,
} from "@/lib/ai/demo-summary-extract";

describe("demo summary extraction", () => {
  it("reads a serialized span back into role blocks with their tool elements", () => {
    const blocks = parseSpan(
      [
        "<user>\nFetch the page.\n</user>",
        '<assistant>\n<tool-call name="fetch_url">{"url":"https://a.example/x"}</tool-call>\n<tool-error name="fetch_url">timed out\nafter 10 s</tool-error>\nIt timed out.\n</assistant>',
      ].join("\n\n"),
    );
    expect(blocks.map((b) => b.role)).toEqual(["user", "assistant"]);
    expect(blocks[1]?.prose).toBe("It timed out.");
    expect(blocks[1]?.tools).toEqual([
      { kind: "call", name: "fetch_url", body: '{"url":"https://a.example/x"}' },
      { kind: "error", name: "fetch_url", body: "timed out\nafter 10 s" },
    ]);
  });

  it("finds URLs, paths, hashes, quantities and code spans verbatim, each once", () => {
    const text =
      "See https://example.com/a/b.html, then edit lib/ai/demo-model.ts and ~/notes/todo.md. " +
      "Commit 3f9a2c1d took 4.8 ms, 12 GB and $12.50; run `npm test -- --run`. Use it and/or the I/O port.";
    expect(artifactsOf(text)).toEqual([
      "https://example.com/a/b.html",
      "lib/ai/demo-model.ts",
      "~/notes/todo.md",
      "3f9a2c1d",
      "4.8 ms",
      "12 GB",
      "$12.50",
      "`npm test -- --run`",
    ]);
  });

  it("takes the user's constraint sentences and quoted strings verbatim", () => {
    const text =
      'I like tea. Replies must stay under 100 words.\nCall the project "Fold Lite" from now on. Never use emoji.';
    expect(constraintsOf(text)).toEqual([
      "Replies must stay under 100 words.",
      '"Fold Lite"',
      "Never use emoji.",
    ]);
  });

  it("keeps short numeric statements as facts, and the last substantive line as the conclusion", () => {
    const prose =
      "The import took 42 s. It worked.\nWhich of the 3 options?\n- Next, index the 7 tables.\n_Demo model (offline)._";
    expect(factsOf(prose)).toEqual(["The import took 42 s.", "Next, index the 7 tables."]);
    expect(conclusionOf(prose)).toBe("Next, index the 7 tables.");
    expect(firstLine("\n  First line here\nsecond")).toBe("First line here");
  });
});
