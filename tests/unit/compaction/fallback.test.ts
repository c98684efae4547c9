import { describe, expect, it } from "vitest";
import { FALLBACK_NOTE, fallbackDigest } from "@/lib/compaction/fallback";
import { missingHeadings, SUMMARY_HEADINGS } from "@/lib/compaction/prompts";
import { createEstimator } from "@/lib/context/tokens";
import type { FoldUIMessage } from "@/lib/message/ui-message";

const estimator = createEstimator();
const countTokens = (text: string) => estimator.countText(text);

function turn(i: number): FoldUIMessage[] {
  return [
    {
      id: `u${i}`,
      role: "user",
      parts: [
        {
          type: "text",
          text: `Request ${i}: fetch https://data.example.com/report/${i} and keep "max ${i} retries".\nDetails follow.\n${"More context. ".repeat(40)}`,
        },
      ],
    },
    {
      id: `a${i}`,
      role: "assistant",
      parts: [
        { type: "step-start" },
        {
          type: "tool-fetch_url",
          toolCallId: `c${i}`,
          state: "output-available",
          input: { url: `https://data.example.com/report/${i}` },
          output: `${"row,".repeat(3_000)} checksum ab12cd${String(i).padStart(4, "0")}ef`,
        },
        {
          type: "tool-run_shell",
          toolCallId: `e${i}`,
          state: "output-error",
          input: { command: "make" },
          errorText: `make: *** [build] Error ${i}`,
        },
        {
          type: "text",
          text: `Conclusion ${i}: the report ${i} is fetched. ${"Explained at length. ".repeat(30)}`,
        },
      ],
    },
  ];
}

const span = (n: number) => Array.from({ length: n }, (_, i) => turn(i)).flat();

describe("fallbackDigest", () => {
  it("says at the top that it is an automatic digest and keeps the six headings in order", () => {
    const digest = fallbackDigest({
      previousSummary: null,
      span: span(2),
      budgetTokens: 2_000,
      countTokens,
    });
    expect(digest.startsWith(FALLBACK_NOTE)).toBe(true);
    expect(FALLBACK_NOTE).toMatch(/summarizer was unavailable/);
    expect(missingHeadings(digest)).toEqual([]);
    const positions = SUMMARY_HEADINGS.map((h) => digest.indexOf(`## ${h}`));
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it("contains the user's requests, their quoted constraints, the last conclusion and errors", () => {
    const digest = fallbackDigest({
      previousSummary: null,
      span: span(3),
      budgetTokens: 3_000,
      countTokens,
    });
    for (const i of [0, 1, 2]) {
      expect(digest).toContain(`- Request ${i}: fetch https://data.example.com/report/${i}`);
      expect(digest).toContain(`- "max ${i} retries"`);
      expect(digest).toContain(`make: *** [build] Error ${i}`);
    }
    expect(digest).toContain("- Last reply: Conclusion 2: the report 2 is fetched.");
    expect(digest).not.toContain("Conclusion 1:");
    // Identifiers are the reference ledger's job (fold.ts), not the digest's.
    expect(digest).not.toContain("## Verbatim references");
  });

  it("fits its budget with a huge span, dropping the oldest items first", () => {
    const huge = span(200);
    const budgetTokens = 800;
    const digest = fallbackDigest({ previousSummary: null, span: huge, budgetTokens, countTokens });
    expect(countTokens(digest)).toBeLessThanOrEqual(budgetTokens);
    expect(digest).toContain("Request 199:");
    expect(digest).toContain("Conclusion 199:");
    expect(digest).not.toContain("Request 0:");
    expect(missingHeadings(digest)).toEqual([]);
  });

  it("extends the previous narrative and never replaces it: the new span's lines give way first", () => {
    const previousSummary = [
      "## Goal & open requests",
      "- Migrate the billing service to Postgres 16.",
      "## Constraints & preferences",
      '- "no downtime during business hours"',
      "## Current state & next step",
      "None.",
      "## Decisions & facts",
      "- Chose pg_dump over logical replication.",
      "## Artifacts & references",
      "None.",
      "## Errors & fixes",
      "None.",
      "",
      "## Verbatim references",
      "From the conversation:",
      "- /srv/billing/schema.sql",
    ].join("\n");
    const roomy = fallbackDigest({
      previousSummary,
      span: span(1),
      budgetTokens: 2_000,
      countTokens,
    });
    expect(roomy).toContain("- Migrate the billing service to Postgres 16.");
    expect(roomy).toContain('- "no downtime during business hours"');
    expect(roomy).toContain("- Chose pg_dump over logical replication.");
    expect(roomy).toContain("Request 0:");
    // The previous ledger is not the digest's: fold.ts renders it once, beside the digest.
    expect(roomy).not.toContain("## Verbatim references");
    expect(roomy.split(FALLBACK_NOTE)).toHaveLength(2);

    const tight = fallbackDigest({
      previousSummary,
      span: span(20),
      budgetTokens: 200,
      countTokens,
    });
    expect(countTokens(tight)).toBeLessThanOrEqual(200);
    expect(tight).toContain("- Migrate the billing service to Postgres 16.");
    expect(tight).toContain('- "no downtime during business hours"');
    expect(tight).not.toContain("Request 0:"); // the new span's oldest line went first
  });

  it("keeps the newest of the new span's lines when the previous narrative alone fills the budget", () => {
    const previousSummary = [
      "## Decisions & facts",
      ...Array.from(
        { length: 60 },
        (_, i) => `- Earlier decision ${i}: keep the billing job on node ${i}.`,
      ),
    ].join("\n");
    const budgetTokens = 600;
    const digest = fallbackDigest({ previousSummary, span: span(10), budgetTokens, countTokens });
    expect(countTokens(digest)).toBeLessThanOrEqual(budgetTokens);
    // What the folded messages asked last, and where they left off.
    expect(digest).toContain("Request 9:");
    expect(digest).toContain("Conclusion 9:");
    // The previous narrative still holds most of the digest.
    const earlier = digest.split("\n").filter((line) => line.startsWith("- Earlier decision"));
    expect(earlier.length).toBeGreaterThan(15);
    expect(countTokens(earlier.join("\n"))).toBeGreaterThan(budgetTokens * 0.4);
  });

  it("makes room in the previous narrative from every section, oldest lines first, emptying none", () => {
    const section = (heading: string, label: string) => [
      `## ${heading}`,
      ...Array.from({ length: 12 }, (_, i) => `- ${label} ${i}: ${"detail ".repeat(6)}`),
    ];
    const previousSummary = [
      ...section("Decisions & facts", "Decision"),
      ...section("Errors & fixes", "Error"),
    ].join("\n");
    const budgetTokens = 350;
    const digest = fallbackDigest({ previousSummary, span: span(10), budgetTokens, countTokens });
    expect(countTokens(digest)).toBeLessThanOrEqual(budgetTokens);
    expect(digest).toContain("Request 9:");
    for (const label of ["Decision", "Error"]) {
      // The newest lines of both sections stay; the oldest went first.
      expect(digest).toContain(`- ${label} 11:`);
      expect(digest).not.toContain(`- ${label} 0:`);
    }
  });

  it("takes the room from the longest sections first: a one-line goal outlasts long lists", () => {
    const previousSummary = [
      "## Goal & open requests",
      "- Migrate the importer to /srv/import",
      ...["Decisions & facts", "Errors & fixes"].flatMap((heading) => [
        `## ${heading}`,
        ...Array.from({ length: 20 }, (_, i) => `- ${heading} line ${i}: ${"detail ".repeat(6)}`),
      ]),
    ].join("\n");
    const budgetTokens = 250;
    const digest = fallbackDigest({ previousSummary, span: [], budgetTokens, countTokens });
    expect(countTokens(digest)).toBeLessThanOrEqual(budgetTokens);
    expect(digest).toContain("- Migrate the importer to /srv/import");
    for (const heading of ["Decisions & facts", "Errors & fixes"]) {
      expect(digest).toContain(`- ${heading} line 19:`);
      expect(digest).not.toContain(`- ${heading} line 0:`);
    }
  });

  it("is never empty", () => {
    const empty = fallbackDigest({
      previousSummary: null,
      span: [],
      budgetTokens: 500,
      countTokens,
    });
    expect(empty.startsWith(FALLBACK_NOTE)).toBe(true);
    const tiny = fallbackDigest({
      previousSummary: null,
      span: span(5),
      budgetTokens: 5,
      countTokens,
    });
    expect(tiny.length).toBeGreaterThan(0);
    expect(countTokens(tiny)).toBeLessThanOrEqual(5);
  });

  it("is deterministic", () => {
    const input = { previousSummary: null, span: span(30), budgetTokens: 1_000, countTokens };
    expect(fallbackDigest(input)).toBe(fallbackDigest({ ...input, span: span(30) }));
  });
});
