import { fromMarkdown } from "mdast-util-from-markdown";
import { micromark } from "micromark";
import { gfm, gfmHtml } from "micromark-extension-gfm";
import { describe, expect, it, vi } from "vitest";
import {
  type ChatSnapshot,
  chatMarkdownPieces,
  exportDisposition,
  exportFileName,
} from "@/lib/chat/export";
import { NOTE_ADDED } from "@/lib/compaction/user-notes";
import type { Chat, Message } from "@/lib/db/schema";

// The real parser, counted: an export reads each reply once.
vi.mock("mdast-util-from-markdown", async (importOriginal) => {
  const actual = await importOriginal<typeof import("mdast-util-from-markdown")>();
  return { ...actual, fromMarkdown: vi.fn(actual.fromMarkdown) };
});

const at = new Date("2026-12-01T10:00:00Z");
/** The transcript as the download sends it, its pieces joined. */
const chatToMarkdown = (snapshot: ChatSnapshot, now: Date) =>
  [...chatMarkdownPieces(snapshot, now)].join("");
const chat = { id: "c1", title: "Fences", contextSummary: "The goal: ship it." } as Chat;
const row = (id: string, role: Message["role"], parts: unknown[], seq: number) =>
  ({ id, chatId: "c1", seq, role, parts, metadata: null, createdAt: at }) as Message;

/**
 * What of `markdown` a CommonMark renderer (micromark, not Fold's code) shows outside code
 * blocks: the rendered HTML with every <pre> block taken out.
 */
function outsideCode(markdown: string): string {
  return micromark(markdown).replace(/<pre>[\s\S]*?<\/pre>/g, "");
}

describe("the Markdown transcript and code blocks", () => {
  it("keeps the next message and the summary outside a block a stopped reply left open", () => {
    const markdown = chatToMarkdown(
      {
        chat,
        rows: [
          row("u1", "user", [{ type: "text", text: "Write the script." }], 0),
          row("a1", "assistant", [{ type: "text", text: "Here:\n\n```sh\necho one" }], 1),
          row("u2", "user", [{ type: "text", text: "Why did it stop?" }], 2),
        ],
        versions: [],
      },
      at,
    );
    const prose = outsideCode(markdown);
    expect(prose).toContain("<h3>You");
    expect(prose).toContain("Why did it stop?");
    expect(prose).toContain("<h2>Summary of the earlier conversation</h2>");
    expect(markdown).toContain("echo one");
  });

  it("keeps the next message outside a block a reply left open, as CommonMark reads its fences: in list items, longer and tilde fences, quotes", () => {
    for (const reply of [
      "Steps:\n\n1. Run:\n   ```bash\n   npm i",
      "- ```js\n  const a = 1;\n  ```\n\nDone.",
      // The fence meant to close the item's block is not indented: it ends the list and opens
      // a block of its own, which nothing closes.
      "1. Run:\n   ```bash\n   npm install\n```\nDone.",
      // A longer fence is closed only by one as long; a tilde fence not by backticks.
      "````md\n```\nstill code",
      "~~~\n```\nstill code",
      // A quoted block ends with the quote.
      "> ```\n> quoted code",
    ]) {
      const markdown = chatToMarkdown(
        {
          chat,
          rows: [
            row("a1", "assistant", [{ type: "text", text: reply }], 0),
            row("u1", "user", [{ type: "text", text: "Next question." }], 1),
          ],
          versions: [],
        },
        at,
      );
      expect(outsideCode(markdown), reply).toContain("Next question.");
    }
  });

  it("keeps the next message and the summary outside a raw HTML block a message left open (a comment, a script, a processing instruction)", () => {
    for (const text of [
      "Here is the page:\n\n<!-- header starts here",
      "<script>\nconst x = 1;",
      "<PRE>\nliteral output",
      "<?php echo 1;",
      "<![CDATA[ raw",
      "- item\n\n  <!-- inside the item",
    ]) {
      const markdown = chatToMarkdown(
        {
          chat,
          rows: [
            row("u1", "user", [{ type: "text", text }], 0),
            row("a1", "assistant", [{ type: "text", text: "Next answer." }], 1),
          ],
          versions: [],
        },
        at,
      );
      const shown = micromark(markdown);
      expect(shown, text).toContain("Next answer.");
      expect(shown, text).toContain("<h2>Summary of the earlier conversation</h2>");
    }
  });

  it("sets a reply's steps a paragraph apart, so a fence that closes one step still closes", () => {
    const markdown = chatToMarkdown(
      {
        chat,
        rows: [
          row(
            "a1",
            "assistant",
            [
              { type: "step-start" },
              { type: "text", text: "First:\n```\nls\n```" },
              { type: "step-start" },
              { type: "text", text: "Done." },
            ],
            0,
          ),
          row("u1", "user", [{ type: "text", text: "Thanks." }], 1),
        ],
        versions: [],
      },
      at,
    );
    const prose = outsideCode(markdown);
    expect(prose).toContain("Done.");
    expect(prose).toContain("Thanks.");
  });
});

describe("the Markdown transcript's compaction entries", () => {
  const entry = (id: string, seq: number, output: Record<string, unknown>) =>
    row(
      id,
      "assistant",
      [
        {
          type: "tool-compact_context",
          toolCallId: `trace-${id}`,
          state: "output-available",
          input: {},
          output: {
            tokensBefore: 0,
            tokensAfter: 0,
            savedPct: 0,
            messagesSummarized: 0,
            ...output,
          },
        },
      ],
      seq,
    );

  it("say what happened, as the timeline's cards do, not that messages were summarized", () => {
    const markdown = chatToMarkdown(
      {
        chat,
        rows: [
          entry("e1", 0, { outcome: "summarized", reason: "manual", messagesSummarized: 4 }),
          entry("e2", 1, { outcome: "summarized", reason: "edited", note: `${NOTE_ADDED}: x` }),
          entry("e3", 2, { outcome: "failed", reason: "threshold" }),
          entry("e4", 3, { outcome: "skipped", reason: "truncated" }),
        ],
        versions: [],
      },
      at,
    );
    expect(markdown).toContain("_Summarized older messages to make room (4 messages)._");
    expect(markdown).toContain("_Note added by you._");
    expect(markdown).toContain("_Older messages could not be summarized this time._");
    expect(markdown).toContain("_The server cut this conversation to fit its window._");
  });

  it("are not counted as messages of the conversation", () => {
    const markdown = chatToMarkdown(
      {
        chat,
        rows: [
          row("u1", "user", [{ type: "text", text: "Hello." }], 0),
          {
            ...entry("e1", 1, { outcome: "summarized", reason: "manual" }),
            metadata: { compaction: true },
          },
          row("a1", "assistant", [{ type: "text", text: "Hi." }], 2),
        ],
        versions: [],
      },
      at,
    );
    expect(markdown).toContain("· 2 messages_");
  });
});

describe("the Markdown transcript's memory", () => {
  it("nests the summary's own sections under its heading, as the notes' own heading under theirs", () => {
    const headings = (contextSummary: string) =>
      [
        ...micromark(
          chatToMarkdown({ chat: { ...chat, contextSummary }, rows: [], versions: [] }, at),
        ).matchAll(/<h(\d)>([^<]*)<\/h\d>/g),
      ].map((m) => `h${m[1]} ${m[2]}`);
    expect(
      headings("## Goal & open requests\nShip it.\n\n## Verbatim references\n- `v2.1`"),
    ).toEqual([
      "h1 Fences",
      "h2 Summary of the earlier conversation",
      "h3 Goal &amp; open requests",
      "h3 Verbatim references",
    ]);
    expect(headings("## Notes you added\n- Answer in French.")).toEqual([
      "h1 Fences",
      "h2 Notes the model keeps",
      "h3 Notes you added",
    ]);
  });

  it("calls a summary of the user's notes alone their notes, not a summary of folded messages", () => {
    const notesOnly = {
      ...chat,
      contextSummary: "## Notes you added\n- Answer in French.",
    } as Chat;
    const markdown = chatToMarkdown(
      {
        chat: notesOnly,
        rows: [row("u1", "user", [{ type: "text", text: "Hi." }], 0)],
        versions: [],
      },
      at,
    );
    expect(markdown).toContain("## Notes the model keeps");
    expect(markdown).not.toContain("Summary of the earlier conversation");
    expect(markdown).toContain("- Answer in French.");
  });
});

describe("the Markdown transcript's outline", () => {
  /** The headings a CommonMark renderer shows, in order, as "h3 Assistant" (a stamp left off). */
  const outline = (markdown: string) =>
    [...micromark(markdown).matchAll(/<h(\d)>([^<]*)<\/h\d>/g)].map(
      (m) => `h${m[1]} ${m[2]?.replace(/ · .*/, "")}`,
    );

  it("nests a reply's own headings below its role heading, leaving `#` lines in code as they are", () => {
    const reply = [
      "# Deploy guide",
      "",
      "## Steps",
      "",
      "```sh",
      "# install first",
      "npm ci",
      "```",
      "",
      "###### Footnote",
      "",
      "Checklist",
      "---------",
    ].join("\n");
    const markdown = chatToMarkdown(
      {
        chat: { ...chat, contextSummary: null },
        rows: [
          row("u1", "user", [{ type: "text", text: "How do I deploy?" }], 0),
          row("a1", "assistant", [{ type: "text", text: reply }], 1),
          row("u2", "user", [{ type: "text", text: "Thanks." }], 2),
        ],
        versions: [],
      },
      at,
    );
    expect(outline(markdown)).toEqual([
      "h1 Fences",
      "h3 You",
      "h3 Assistant",
      "h4 Deploy guide",
      "h5 Steps",
      // Markdown has no seventh level.
      "h6 Footnote",
      "h5 Checklist",
      "h3 You",
    ]);
    expect(markdown).toContain("```sh\n# install first\nnpm ci\n```");
  });

  it("nests a reply's reasoning's headings below its role heading too", () => {
    const markdown = chatToMarkdown(
      {
        chat: { ...chat, contextSummary: null },
        rows: [
          row(
            "a1",
            "assistant",
            [
              { type: "reasoning", text: "# Plan\nCheck the mirror.", state: "done" },
              { type: "text", text: "## Answer\nIt is up." },
            ],
            0,
          ),
        ],
        versions: [],
      },
      at,
    );
    expect(outline(markdown)).toEqual(["h1 Fences", "h3 Assistant", "h4 Plan", "h4 Answer"]);
  });

  it("keeps a reply's links, headings and a block it left open right together, the reply read once", () => {
    const reply =
      "See [the\nguide]\n===\n\n[the guide]: https://one.example/guide\n\n```sh\n# step";
    vi.mocked(fromMarkdown).mockClear();
    const markdown = chatToMarkdown(
      {
        chat: { ...chat, contextSummary: null },
        rows: [
          row("a1", "assistant", [{ type: "text", text: reply }], 0),
          row("u1", "user", [{ type: "text", text: "Next question." }], 1),
        ],
        versions: [],
      },
      at,
    );
    expect(vi.mocked(fromMarkdown)).toHaveBeenCalledTimes(1);
    const html = micromark(markdown);
    expect(html).toContain('<h4>See <a href="https://one.example/guide">the guide</a></h4>');
    expect(outsideCode(markdown)).toContain("Next question.");
    expect(html).toContain("# step");
  });
});

describe("a user's own words in the transcript", () => {
  it("render as typed, as the chat shows them, while a reply's Markdown stays Markdown", () => {
    const typed = "My list:\n1) apples\n# not a heading\nrun __init__.py now";
    const markdown = chatToMarkdown(
      {
        chat: { ...chat, title: "C# tips #", contextSummary: null },
        rows: [
          row("u1", "user", [{ type: "text", text: typed }], 0),
          row("a1", "assistant", [{ type: "text", text: "# A heading\n\n**bold**" }], 1),
        ],
        versions: [],
      },
      at,
    );
    const html = micromark(markdown);
    expect(html).toContain("<h1>C# tips #</h1>");
    expect(html).toContain(
      "<p>My list:<br />\n1) apples<br />\n# not a heading<br />\nrun __init__.py now</p>",
    );
    // The reply's heading sits below the one it is under ("### Assistant · …").
    expect(html).toContain("<h4>A heading</h4>");
    expect(html).toContain("<strong>bold</strong>");
  });
});

describe("links and footnotes of replies in the transcript", () => {
  it("lead each reply to its own definitions, as the chat shows it", () => {
    const reply = (site: string) =>
      `Read [the spec][1].[^1]\n\n[1]: https://${site}.example/spec\n\n[^1]: Noted by ${site}.`;
    const markdown = chatToMarkdown(
      {
        chat: { ...chat, contextSummary: null },
        rows: [
          row("a1", "assistant", [{ type: "text", text: reply("one") }], 0),
          row("a2", "assistant", [{ type: "text", text: reply("two") }], 1),
        ],
        versions: [],
      },
      at,
    );
    const html = micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()] });
    const links = [...html.matchAll(/<a href="(https:[^"]+)">the spec<\/a>/g)].map((m) => m[1]);
    expect(links).toEqual(["https://one.example/spec", "https://two.example/spec"]);
    expect(html).toContain("Noted by one.");
    expect(html).toContain("Noted by two.");
  });
  it("lead each step's reasoning to its own definitions too, and the notes to theirs", () => {
    const thought = (site: string) =>
      `Check [the spec][1].[^1]\n\n[1]: https://${site}.example/spec\n\n[^1]: Seen by ${site}.`;
    const reasoning = (site: string) => [
      { type: "reasoning", text: thought(`${site}-first-step`), state: "done" },
      { type: "reasoning", text: thought(`${site}-second-step`), state: "done" },
      { type: "text", text: "Done." },
    ];
    const markdown = chatToMarkdown(
      {
        chat: {
          ...chat,
          contextSummary:
            "## Notes you added\n- Keep [the spec][1] in mind.\n\n  [1]: https://notes.example/spec",
        },
        rows: [
          row("a1", "assistant", reasoning("one"), 0),
          row("a2", "assistant", reasoning("two"), 1),
        ],
        versions: [],
      },
      at,
    );
    const html = micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()] });
    const links = [...html.matchAll(/<a href="(https:[^"]+)">the spec<\/a>/g)].map((m) => m[1]);
    expect(links).toEqual([
      "https://one-first-step.example/spec",
      "https://one-second-step.example/spec",
      "https://two-first-step.example/spec",
      "https://two-second-step.example/spec",
      "https://notes.example/spec",
    ]);
    for (const site of ["one-first-step", "one-second-step", "two-first-step", "two-second-step"]) {
      expect(html).toContain(`Seen by ${site}.`);
    }
  });
});

describe("the download's file name", () => {
  it("keeps a title's letters of any writing system, and gives clients that read only ASCII a name too", () => {
    const named = (title: string) => exportFileName({ title }, "markdown");
    expect(named("東京旅行の計画")).toBe("東京旅行の計画.md");
    expect(named("План поездки")).toBe("план-поездки.md");
    expect(named("Café: notes / ideas!")).toBe("cafe-notes-ideas.md");
    expect(named("???")).toBe("chat.md");
    // Marks that are part of a letter stay: vowel signs, voicing marks, й; Korean stays composed.
    expect(named("हिन्दी नोट्स")).toBe("हिन्दी-नोट्स.md");
    expect(named("বাংলা")).toBe("বাংলা.md");
    expect(named("日本語ガイド")).toBe("日本語ガイド.md");
    expect(named("한국어 메모")).toBe("한국어-메모.md");
    expect(named("Мой план")).toBe("мой-план.md");
    expect(exportDisposition(named("План поездки"))).toBe(
      `attachment; filename="chat.md"; filename*=UTF-8''${encodeURIComponent("план-поездки.md")}`,
    );
    expect(exportDisposition(named("Trip to Tōkyō"))).toBe(
      "attachment; filename=\"trip-to-tokyo.md\"; filename*=UTF-8''trip-to-tokyo.md",
    );
  });
});

describe("the Markdown transcript and what a reply holds besides its text", () => {
  it("keeps a reply the chat shows by its reasoning alone, stopped, with that reasoning quoted", () => {
    const markdown = chatToMarkdown(
      {
        chat: { ...chat, contextSummary: null },
        rows: [
          row("u1", "user", [{ type: "text", text: "Which mirror is up?" }], 0),
          {
            ...row(
              "a1",
              "assistant",
              [
                { type: "step-start" },
                {
                  type: "reasoning",
                  text: "Mirror 10.0.0.3 answered in 12 ms,\nso",
                  state: "done",
                },
              ],
              1,
            ),
            metadata: { stopped: true },
          } as Message,
          row("u2", "user", [{ type: "text", text: "Go on." }], 2),
        ],
        versions: [],
      },
      at,
    );
    expect(markdown).toContain("3 messages");
    expect(markdown.match(/^### /gm)).toHaveLength(3);
    const html = micromark(markdown);
    expect(html).toContain("<em>Stopped.</em>");
    expect(html).toMatch(
      /<blockquote>[\s\S]*Mirror 10\.0\.0\.3 answered in 12 ms,\nso[\s\S]*<\/blockquote>/,
    );
    expect(html).toContain("Go on.");
  });

  it("names a file the model made, with its type and size, without its bytes", () => {
    const png = `data:image/png;base64,${Buffer.alloc(3_000, 7).toString("base64")}`;
    const markdown = chatToMarkdown(
      {
        chat: { ...chat, contextSummary: null },
        rows: [
          row("u1", "user", [{ type: "text", text: "Draw a lighthouse." }], 0),
          row("a1", "assistant", [{ type: "file", mediaType: "image/png", url: png }], 1),
        ],
        versions: [],
      },
      at,
    );
    expect(markdown.match(/^### /gm)).toHaveLength(2);
    expect(markdown).toContain("(image/png, 2.9 KB): in the JSON export.");
    expect(markdown).not.toContain("base64");
  });
});
