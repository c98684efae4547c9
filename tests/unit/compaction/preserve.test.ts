import type { LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { summarizerModel } from "@/lib/chat/summarizer-models";
import {
  containsVerbatim,
  extractIdentifiers,
  preserveIdentifiers,
  splitVerbatimReferences,
} from "@/lib/compaction/preserve";
import { SUMMARY_HEADINGS } from "@/lib/compaction/prompts";
import { createSummarizer } from "@/lib/compaction/summarize";
import { createEstimator } from "@/lib/context/tokens";
import type { FoldUIMessage } from "@/lib/message/ui-message";

const estimator = createEstimator();
const countTokens = (text: string) => estimator.countText(text);

/** What a summarizer that keeps no identifier at all writes. */
const FORGETFUL_SUMMARY = SUMMARY_HEADINGS.map((h) => `## ${h}\nSome work happened.`).join("\n\n");

const URLS = [
  "https://api.example.com/v2/orders?id=42",
  "https://docs.fold.dev/compaction#watermark",
  "http://10.0.0.12:8080/health",
  "https://github.com/acme/widget/pull/1337",
  "https://en.wikipedia.org/wiki/Fold_(higher-order_function)",
  "https://cdn.example.net/assets/app-3f9c.js",
  "wss://stream.example.org/socket",
  "https://status.example.com/incidents/7781",
  "ftp://files.example.com/pub/release.tar.gz",
  "https://example.com/a/b/c/d.html",
];
const PATHS = [
  "/etc/nginx/sites-available/fold.conf",
  "/var/log/fold/app.log",
  "./scripts/migrate.ts",
  "../shared/DESIGN.md",
  "~/.config/fold/settings.json",
  "C:\\Users\\ada\\fold\\notes.txt",
  "/srv/data/exports/2024-q3.csv",
  "/usr/local/bin/fold-cli",
  "./lib/compaction/preserve.ts",
  "/opt/fold/releases/current",
];
const HASHES = [
  "9fceb02d0ae598e95dc970b74767f19372d61af8",
  "3f2a9c1",
  "e83c5163316f89bfbde7d9ab23ca2e25604af290",
  "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
  "a1b2c3d4e5f6",
  "7d865e959b2466918c9863afca942d0fb89d7c9ac0c99bafc3749504ded97730",
  "0f1e2d3c4b5a",
  "c9a3f4e2-7b1d-4e8a-9f00-1234abcd5678",
  "deadbeef42",
  "5eb63bbbe01eeed093cb22bb8f5acdc3",
];
const QUANTITIES = [
  "512 MB",
  "30 s",
  "2.5GHz",
  "$40",
  "15 %",
  "250 ms",
  "8 GiB",
  "3 days",
  "1,200 tokens",
  "99.9%",
];
const QUOTES = [
  "never touch the production database",
  "keep responses under two paragraphs",
  "use British spelling",
  "no third-party analytics",
  "deploy only on Tuesdays",
  "tests must run offline",
  "prefer Postgres over MySQL",
  "do not rename public APIs",
  "keep the bundle small",
  "always cite the source",
];
const PLANTED = [...URLS, ...PATHS, ...HASHES, ...QUANTITIES, ...QUOTES];

/** Round r's span: five planted identifiers spread over user text, tool args and a long tool output. */
function roundSpan(round: number): FoldUIMessage[] {
  const url = URLS[round] as string;
  const path = PATHS[round] as string;
  const hash = HASHES[round] as string;
  const quantity = QUANTITIES[round] as string;
  const quote = QUOTES[round] as string;
  const filler =
    "The team discussed the plan in some detail without settling anything new. ".repeat(6);
  return [
    {
      id: `r${round}-u`,
      role: "user",
      parts: [
        {
          type: "text",
          text: `Round ${round}: please check ${url} and remember "${quote}". Budget is ${quantity}. ${filler}`,
        },
      ],
    },
    {
      id: `r${round}-a`,
      role: "assistant",
      parts: [
        { type: "step-start" },
        { type: "text", text: `Reading the file now. ${filler}` },
        {
          type: "tool-read_file",
          toolCallId: `call-${round}`,
          state: "output-available",
          input: { path },
          // The hash sits in the middle of a long output: Stage 1 pruning cuts it,
          // the guard must still find it in the unpruned span.
          output: `${"x".repeat(6_000)}\ncommit ${hash}\n${"y".repeat(6_000)}`,
        },
        { type: "text", text: "Done reading." },
      ],
    },
  ];
}

function occurrences(text: string, value: string): number {
  return text.split(value).length - 1;
}

describe("extractIdentifiers", () => {
  const span: FoldUIMessage[] = [
    {
      id: "u1",
      role: "user",
      parts: [
        {
          type: "text",
          text: "Open https://example.com/x (the spec) and /etc/app/config.yaml. Mail ops@example.com. I said \"stay under 512 MB\" and don't use 'eval' here. Run `npm run build`. Costs $40, waits 30 s, CPU 2.5GHz, 15 % off, and/or whatever; id 3f2a9c1.",
        },
      ],
    },
    {
      id: "a1",
      role: "assistant",
      parts: [
        { type: "text", text: 'The assistant said "this is not a user quote" about deadbeef.' },
        {
          type: "dynamic-tool",
          toolName: "fetch_url",
          toolCallId: "c1",
          state: "output-error",
          input: { url: "https://example.com/x", path: "C:\\data\\in.csv" },
          errorText: "timeout after 250 ms",
        },
      ],
    },
  ];
  const ids = extractIdentifiers(span);
  const values = ids.map((id) => id.value);

  it("finds URLs, paths, emails, hashes, quantities, code and user quotes", () => {
    expect(values).toEqual(
      expect.arrayContaining([
        "https://example.com/x",
        "/etc/app/config.yaml",
        "ops@example.com",
        "stay under 512 MB",
        "eval",
        "npm run build",
        "$40",
        "30 s",
        "2.5GHz",
        "15 %",
        "3f2a9c1",
        "C:\\data\\in.csv",
        "250 ms",
      ]),
    );
  });

  it("does not take prose for identifiers", () => {
    expect(values).not.toContain("/or");
    expect(values).not.toContain("deadbeef"); // hex without a digit is a word
    expect(values).not.toContain("this is not a user quote"); // quotes count only from the user
    expect(values.some((v) => v.startsWith("t use"))).toBe(false); // apostrophes are not quotes
    expect(values).not.toContain("https://example.com/x (the spec)");
  });

  it("counts occurrences, remembers who said it and where it was last seen", () => {
    const url = ids.find((id) => id.value === "https://example.com/x");
    expect(url).toMatchObject({ kind: "url", fromUser: true, count: 2, lastIndex: 1 });
    const error = ids.find((id) => id.value === "250 ms");
    expect(error).toMatchObject({ kind: "quantity", fromUser: false, count: 1, lastIndex: 1 });
  });

  it("sorts the user's identifiers first", () => {
    const firstOther = ids.findIndex((id) => !id.fromUser);
    expect(firstOther).toBeGreaterThan(0);
    expect(ids.slice(firstOther).every((id) => !id.fromUser)).toBe(true);
  });

  it("ignores the compaction trace", () => {
    const trace: FoldUIMessage = {
      id: "a2",
      role: "assistant",
      parts: [
        {
          type: "tool-compact_context",
          toolCallId: "t",
          state: "output-available",
          input: {},
          output: { summary: "see https://trace.example/only" },
        },
      ],
    };
    expect(extractIdentifiers([trace])).toEqual([]);
  });
});

describe("preserveIdentifiers", () => {
  it("keeps all 50 planted identifiers through 10 chained compactions by a summarizer that drops them", async () => {
    const model = new MockLanguageModelV4({
      doGenerate: async (): Promise<LanguageModelV4GenerateResult> => ({
        content: [{ type: "text", text: FORGETFUL_SUMMARY }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        },
        warnings: [],
      }),
    });
    const summarize = createSummarizer({
      models: [summarizerModel({ id: "mock:forgetful", model, contextWindow: 128_000 })],
      timeoutMs: 5_000,
      estimator,
    });
    let summary: string | null = null;
    for (let round = 0; round < 10; round += 1) {
      const result = await summarize({
        previousSummary: summary,
        span: roundSpan(round),
        summaryBudget: 4_000,
      });
      summary = result.summary;
      // Planted so far survive every round, not only the last.
      for (let r = 0; r <= round; r += 1) {
        expect(summary).toContain(URLS[r]);
        expect(summary).toContain(QUOTES[r]);
      }
    }
    const final = summary ?? "";
    for (const value of PLANTED) expect(final).toContain(value);
    for (const value of PLANTED) expect(occurrences(final, value)).toBe(1);
    expect(occurrences(final, "## Verbatim references")).toBe(1);
    expect(countTokens(final)).toBeLessThanOrEqual(4_000);
  });

  it("does not list identifiers the summary kept", () => {
    const span = roundSpan(0);
    const summary = `${FORGETFUL_SUMMARY}\nChecked ${URLS[0]} and ${PATHS[0]}.`;
    const out = preserveIdentifiers({
      span,
      previousSummary: null,
      summary,
      maxTokens: 1_000,
      countTokens,
    });
    expect(occurrences(out, URLS[0] as string)).toBe(1);
    expect(occurrences(out, PATHS[0] as string)).toBe(1);
    expect(out).toContain(`- ${HASHES[0]}`);
    expect(out).toContain(`- ${QUOTES[0]}`);
  });

  it("returns the summary unchanged when nothing is missing", () => {
    const span: FoldUIMessage[] = [
      { id: "u", role: "user", parts: [{ type: "text", text: "see https://example.com/ok" }] },
    ];
    const summary = `${FORGETFUL_SUMMARY}\nhttps://example.com/ok`;
    expect(
      preserveIdentifiers({ span, previousSummary: null, summary, maxTokens: 500, countTokens }),
    ).toBe(summary);
  });

  it("respects maxTokens and puts the user's identifiers first", () => {
    const span: FoldUIMessage[] = [
      {
        id: "a0",
        role: "assistant",
        parts: [{ type: "text", text: HASHES.concat(URLS).join(" ") }],
      },
      {
        id: "u1",
        role: "user",
        parts: [{ type: "text", text: QUOTES.map((q) => `"${q}"`).join(", ") }],
      },
    ];
    const maxTokens = 60;
    const out = preserveIdentifiers({
      span,
      previousSummary: null,
      summary: FORGETFUL_SUMMARY,
      maxTokens,
      countTokens,
    });
    const appendix = out.slice(FORGETFUL_SUMMARY.length).trim();
    expect(appendix.startsWith("## Verbatim references\nSaid by the user:\n")).toBe(true);
    expect(countTokens(appendix)).toBeLessThanOrEqual(maxTokens);
    const listed = appendix.split("\n").filter((l) => l.startsWith("- "));
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.length).toBeLessThan(QUOTES.length + HASHES.length + URLS.length);
    // Only user quotes fit: every one listed is the user's, in the order they were said.
    expect(listed).toEqual(QUOTES.slice(0, listed.length).map((q) => `- ${q}`));
  });

  it("prefers identifiers used more often, then more recently", () => {
    const text = (id: string, t: string): FoldUIMessage => ({
      id,
      role: "assistant",
      parts: [{ type: "text", text: t }],
    });
    const span = [
      text("a", "/srv/old/file.txt /srv/often/file.txt"),
      text("b", "/srv/often/file.txt"),
      text("c", "/srv/recent/file.txt"),
    ];
    const out = preserveIdentifiers({
      span,
      previousSummary: null,
      summary: FORGETFUL_SUMMARY,
      maxTokens: 500,
      countTokens,
    });
    const listed = out.split("\n").filter((l) => l.startsWith("- "));
    expect(listed).toEqual([
      "- /srv/often/file.txt",
      "- /srv/recent/file.txt",
      "- /srv/old/file.txt",
    ]);
  });

  it("carries the previous summary's references forward", () => {
    const previousSummary = `${FORGETFUL_SUMMARY}\n\n## Verbatim references\nSaid by the user:\n- ${QUOTES[3]}\nFrom the conversation:\n- ${URLS[7]}`;
    const out = preserveIdentifiers({
      span: roundSpan(1),
      previousSummary,
      summary: FORGETFUL_SUMMARY,
      maxTokens: 1_000,
      countTokens,
    });
    const { references } = splitVerbatimReferences(out);
    const byValue = new Map(references.map((r) => [r.value, r.fromUser]));
    expect(byValue.get(QUOTES[3] as string)).toBe(true);
    expect(byValue.get(URLS[7] as string)).toBe(false);
    expect(byValue.get(QUOTES[1] as string)).toBe(true);
  });

  it("merges a section the model echoed instead of adding a second one", () => {
    const echoed = `${FORGETFUL_SUMMARY}\n\n## Verbatim references\n- ${URLS[0]}\n- \`${PATHS[0]}\``;
    const out = preserveIdentifiers({
      span: roundSpan(0),
      previousSummary: null,
      summary: echoed,
      maxTokens: 1_000,
      countTokens,
    });
    expect(occurrences(out, "Verbatim references")).toBe(1);
    expect(occurrences(out, URLS[0] as string)).toBe(1);
    expect(occurrences(out, PATHS[0] as string)).toBe(1);
    expect(out).toContain(`- ${HASHES[0]}`);
  });

  it("is deterministic", () => {
    const input = {
      span: roundSpan(2),
      previousSummary: null,
      summary: FORGETFUL_SUMMARY,
      maxTokens: 300,
      countTokens,
    };
    expect(preserveIdentifiers(input)).toBe(preserveIdentifiers(input));
  });
});

describe("containsVerbatim", () => {
  it("matches whole identifiers, not the middle of a longer token", () => {
    expect(containsVerbatim("waited 30 s then", "30 s")).toBe(true);
    expect(containsVerbatim("waited 130 seconds", "30 s")).toBe(false);
    expect(containsVerbatim("commit abc12345", "abc1234")).toBe(false);
    expect(containsVerbatim("see /a/b.c.", "/a/b.c")).toBe(true);
  });
});
