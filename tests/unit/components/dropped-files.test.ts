import { fromMarkdown } from "mdast-util-from-markdown";
import { describe, expect, it } from "vitest";
import {
  carriesFiles,
  dropInto,
  fencedFile,
  readDroppedFile,
} from "@/components/chat/dropped-files";

const file = (name: string, content: string | Uint8Array<ArrayBuffer>, type = "") =>
  new File([content], name, { type });

describe("a file dropped on the message box", () => {
  it("gives a text file's words, whatever media type the system named", async () => {
    // Many systems call a .ts file an MPEG transport stream.
    const read = await readDroppedFile(
      file("util.ts", "export const x = 1;\n", "video/mp2t"),
      1000,
    );
    expect(read).toEqual({ name: "util.ts", text: "export const x = 1;\n" });
    const none = await readDroppedFile(file("README", "Read me.", ""), 1000);
    expect(none).toEqual({ name: "README", text: "Read me." });
  });

  it("keeps text in any writing system", async () => {
    const read = await readDroppedFile(file("notes.md", "会议纪要 — café ✓", "text/markdown"), 100);
    expect(read).toEqual({ name: "notes.md", text: "会议纪要 — café ✓" });
  });

  it("refuses an image or other binary with the file's name", async () => {
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    expect(await readDroppedFile(file("photo.png", png, "image/png"), 1000)).toEqual({
      name: "photo.png",
      problem: "photo.png is not a text file",
    });
    // Valid UTF-8 that carries NULs is a binary format all the same.
    const nuls = await readDroppedFile(file("data.bin", "ab\u0000cd"), 1000);
    expect(nuls).toEqual({ name: "data.bin", problem: "data.bin is not a text file" });
  });

  it("refuses a file longer than the room left in the message", async () => {
    expect(await readDroppedFile(file("long.txt", "x".repeat(11)), 10)).toEqual({
      name: "long.txt",
      problem: "long.txt is too long for a message",
    });
    expect(await readDroppedFile(file("fits.txt", "x".repeat(10)), 10)).toEqual({
      name: "fits.txt",
      text: "x".repeat(10),
    });
    // Four bytes of UTF-8 a character at most: a file of far more bytes is not read at all.
    let read = false;
    const huge = {
      name: "huge.log",
      size: 41,
      arrayBuffer: async () => {
        read = true;
        return new ArrayBuffer(41);
      },
    };
    expect(await readDroppedFile(huge, 10)).toEqual({
      name: "huge.log",
      problem: "huge.log is too long for a message",
    });
    expect(read).toBe(false);
  });

  it("fences the text under the file's name so Markdown shows it as written", () => {
    const text = "# Title\n\nSome `code` and a fence:\n```js\nx()\n```\n";
    const fenced = fencedFile("doc.md", text);
    expect(fenced.startsWith("doc.md:\n````\n")).toBe(true);
    const tree = fromMarkdown(fenced);
    const code = tree.children.find((node) => node.type === "code");
    expect(code && "value" in code ? code.value : null).toBe(text.replace(/\n$/, ""));
    expect(fencedFile("a.txt", "no newline")).toBe("a.txt:\n```\nno newline\n```");
  });

  it("tells a dragged file from dragged text or a link", () => {
    expect(carriesFiles(["Files"])).toBe(true);
    expect(carriesFiles(["text/plain", "text/uri-list"])).toBe(false);
  });

  it("puts the blocks where the cursor was, a blank line on either side, the cursor after them", () => {
    const draft = "Please review:\nThanks";
    const at = { start: "Please review:".length, end: "Please review:".length };
    const dropped = dropInto(draft, at, [{ name: "a.txt", text: "A" }], 1_000);
    expect(dropped.text).toBe("Please review:\n\na.txt:\n```\nA\n```\n\nThanks");
    expect(dropped.text.slice(0, dropped.caret).endsWith("```")).toBe(true);
    expect(dropped.problems).toEqual([]);
    // Into an empty box: the blocks alone, a blank line between two.
    const two = dropInto(
      "",
      { start: 0, end: 0 },
      [
        { name: "a.txt", text: "A" },
        { name: "b.txt", text: "B" },
      ],
      1_000,
    );
    expect(two.text).toBe("a.txt:\n```\nA\n```\n\nb.txt:\n```\nB\n```");
    expect(two.caret).toBe(two.text.length);
  });

  it("refuses a block that would take the draft past the limit, its name line and fences counted", () => {
    const text = "x".repeat(95);
    // The text alone fits in 100; with "n.txt:\n```\n" and "\n```" it does not.
    const dropped = dropInto("", { start: 0, end: 0 }, [{ name: "n.txt", text }], 100);
    expect(dropped.text).toBe("");
    expect(dropped.problems).toEqual(["n.txt is too long for a message"]);
    const fits = dropInto("", { start: 0, end: 0 }, [{ name: "n.txt", text: "x".repeat(80) }], 100);
    expect(fits.text.length).toBeLessThanOrEqual(100);
    expect(fits.problems).toEqual([]);
    // Refusals of reading come through with the rest.
    const mixed = dropInto(
      "Hi",
      { start: 2, end: 2 },
      [
        { name: "p.png", problem: "p.png is not a text file" },
        { name: "a.txt", text: "A" },
      ],
      100,
    );
    expect(mixed.problems).toEqual(["p.png is not a text file"]);
    expect(mixed.text).toBe("Hi\n\na.txt:\n```\nA\n```");
  });
});
