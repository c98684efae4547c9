import { describe, expect, it } from "vitest";
import { repairPartialMarkdown as repair } from "@/components/chat/message/partial-markdown";

describe("repairPartialMarkdown", () => {
  it("leaves finished markdown untouched", () => {
    const done = [
      "# Title",
      "",
      "Some **bold**, *italic* and `code` with a [link](https://example.com).",
      "",
      "```ts",
      "const a = 1;",
      "```",
      "",
      "- [ ] task",
      "- item",
    ].join("\n");
    expect(repair(done)).toBe(done);
  });

  describe("code fences", () => {
    it("closes an unterminated fence", () => {
      expect(repair("Here:\n```ts\nconst a = 1;")).toBe("Here:\n```ts\nconst a = 1;\n```");
    });

    it("closes a fence that has just opened", () => {
      expect(repair("Here:\n```")).toBe("Here:\n```\n```");
    });

    it("does not add a blank line when the text ends with a newline", () => {
      expect(repair("```py\nx = 1\n")).toBe("```py\nx = 1\n```");
    });

    it("matches the opener's length, character and indent", () => {
      expect(repair("````md\n```\ninner")).toBe("````md\n```\ninner\n````");
      expect(repair("~~~\ncode")).toBe("~~~\ncode\n~~~");
      expect(repair("1. Step\n   ```sh\n   ls")).toBe("1. Step\n   ```sh\n   ls\n   ```");
    });

    it("drops a half-arrived closing fence instead of showing it as code", () => {
      expect(repair("```js\nx()\n``")).toBe("```js\nx()\n```");
    });

    it("does not repair inline syntax inside an open fence", () => {
      expect(repair("```md\n**bold [link](htt")).toBe("```md\n**bold [link](htt\n```");
    });

    it("keeps a closing fence that has just arrived", () => {
      expect(repair("```sh\nls\n```")).toBe("```sh\nls\n```");
    });

    it("treats a closed fence as closed", () => {
      expect(repair("```\na\n```\nafter **b")).toBe("```\na\n```\nafter **b**");
    });

    it("ignores inline triple backticks with backticks in the info string", () => {
      expect(repair("```a``` done")).toBe("```a``` done");
    });
  });

  describe("dangling markers at the very end", () => {
    it("drops an unmatched ** or * with nothing after it", () => {
      expect(repair("Hello **")).toBe("Hello ");
      expect(repair("Hello *")).toBe("Hello ");
    });

    it("drops a lone backtick run at the end", () => {
      expect(repair("Run `")).toBe("Run ");
      expect(repair("Run ``")).toBe("Run ");
    });

    it("keeps a finished span that ends the text", () => {
      expect(repair("**bold**")).toBe("**bold**");
      expect(repair("*it*")).toBe("*it*");
      expect(repair("run `ls`")).toBe("run `ls`");
    });

    it("completes a closer that has half arrived", () => {
      expect(repair("**bold*")).toBe("**bold**");
    });
  });

  describe("unterminated inline spans", () => {
    it("closes bold and italic that already have content", () => {
      expect(repair("a **bold")).toBe("a **bold**");
      expect(repair("an *ital")).toBe("an *ital*");
      expect(repair("**bold *both")).toBe("**bold *both***");
    });

    it("puts the closer before trailing spaces so it still closes", () => {
      expect(repair("**bold ")).toBe("**bold** ");
    });

    it("closes inline code with a run of the same length, inner spans first", () => {
      expect(repair("call `fn(")).toBe("call `fn(`");
      expect(repair("use ``a`b")).toBe("use ``a`b``");
      expect(repair("**see `code")).toBe("**see `code`**");
    });

    it("does not count stars inside code or escaped stars", () => {
      expect(repair("`a*b` and \\*c")).toBe("`a*b` and \\*c");
    });

    it("leaves list bullets and spaced-out stars alone", () => {
      expect(repair("* item")).toBe("* item");
      expect(repair("2 * 3 = 6")).toBe("2 * 3 = 6");
    });

    it("only looks at the last line", () => {
      expect(repair("**one\ntwo")).toBe("**one\ntwo");
    });
  });

  describe("partial links", () => {
    it("renders a link whose URL is still arriving as its text", () => {
      expect(repair("See [the docs](htt")).toBe("See the docs");
      expect(repair("See [the docs](")).toBe("See the docs");
      expect(repair("See [the docs]")).toBe("See the docs");
      expect(repair("See [the do")).toBe("See the do");
    });

    it("keeps finished links before the partial one", () => {
      expect(repair("[a](https://a.io) and [b](https://b")).toBe("[a](https://a.io) and b");
    });

    it("renders a partial image as its alt text", () => {
      expect(repair("![chart](https://x")).toBe("chart");
    });

    it("then closes emphasis inside the link text", () => {
      expect(repair("[**bold](htt")).toBe("**bold**");
    });

    it("leaves brackets inside code, escaped brackets, footnotes and task boxes", () => {
      expect(repair("`arr[i")).toBe("`arr[i`");
      expect(repair("`arr[i` and x")).toBe("`arr[i` and x");
      expect(repair("a \\[b")).toBe("a \\[b");
      expect(repair("note[^1")).toBe("note[^1");
      expect(repair("- [ ]")).toBe("- [ ]");
      expect(repair("- [x]")).toBe("- [x]");
    });
  });
});

describe("repairPartialMarkdown on every prefix of a reply", () => {
  const reply = [
    "Here is **the plan** with `code`:",
    "",
    "1. Read [the docs](https://example.com/docs).",
    "2. Run:",
    "   ```sh",
    "   npm test",
    "   ```",
    "",
    "Done *now*.",
  ].join("\n");
  const prefixes = Array.from({ length: reply.length + 1 }, (_, n) => reply.slice(0, n));

  it("never leaves a code fence open", () => {
    for (const prefix of prefixes) {
      const fences = repair(prefix)
        .split("\n")
        .filter((line) => /^\s*```/.test(line));
      expect(fences.length % 2, JSON.stringify(prefix)).toBe(0);
    }
  });

  it("never shows a half link's URL", () => {
    for (const prefix of prefixes) {
      const out = repair(prefix);
      if (!prefix.includes("docs)")) expect(out, JSON.stringify(prefix)).not.toContain("](");
    }
  });
});
