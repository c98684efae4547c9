import { generateText } from "ai";
import { describe, expect, it } from "vitest";
import { createDemoModel, DEMO_CONTEXT_WINDOW } from "@/lib/ai/demo-model";
import { summarizerModel } from "@/lib/chat/summarizer-models";
import {
  missingHeadings,
  SUMMARY_HEADINGS,
  type SummaryHeading,
  summarizerInstructions,
  summarizerPrompt,
  VERBATIM_REFERENCES_HEADING,
} from "@/lib/compaction/prompts";
import { serializeSpan } from "@/lib/compaction/serialize";
import { createSummarizer, type SummarizeRequest } from "@/lib/compaction/summarize";
import { createEstimator } from "@/lib/context/tokens";
import type { FoldUIMessage } from "@/lib/message/ui-message";

const estimator = createEstimator();
const demo = () => createDemoModel({ chunkDelayMs: 0, estimator });
/** The budget Fold gives a summary on the demo model's 8,192-token window. */
const SUMMARY_BUDGET_8K = 860;

const URL_1 = "https://docs.example.org/lisbon/trams?line=28";
const QUOTE_1 = "\u201cno hostels, ever\u201d";
const PATH_1 = "/srv/trips/lisbon-2025.md";
const URL_2 = "https://api.example.net/v2/fares/12345";
const QUOTE_2 = '"window seat only"';

const user = (id: string, text: string): FoldUIMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text }],
});

/** What a chat reply around the facts reads like: words without identifiers. */
const PROSE =
  "Here is how I would approach it, step by step, keeping what you said in mind and checking each part before moving on to the next one.";

const assistant = (
  id: string,
  text: string,
  parts: FoldUIMessage["parts"] = [],
): FoldUIMessage => ({
  id,
  role: "assistant",
  parts: [{ type: "step-start" }, ...parts, { type: "text", text: `${PROSE}\n${text}` }],
});

const firstSpan: FoldUIMessage[] = [
  user(
    "u1",
    `Plan a 4-day trip to Lisbon in October.\nMy rule: ${QUOTE_1}. Budget must stay under 900 EUR.`,
  ),
  assistant(
    "a1",
    `Four days fit well. Tram 28 runs every 12 min; see ${URL_1}.\nI will draft a day-by-day plan next.`,
  ),
  user("u2", `Save the draft to ${PATH_1} please.`),
  assistant("a2", "Saved. The draft is 2.4 KB and lists 9 stops.\nNext I will add restaurants.", [
    {
      type: "tool-fetch_url",
      toolCallId: "c1",
      state: "output-error",
      input: { url: "https://blocked.example.com/menu" },
      errorText: "403 Forbidden",
    },
  ]),
];

const secondSpan: FoldUIMessage[] = [
  user("u3", `Now book the flight. I want a ${QUOTE_2}; never pick a red-eye.`),
  assistant(
    "a3",
    `Fares come from ${URL_2}. The cheapest is 182 EUR at 09:40.\nShall I hold it for 24 hours?`,
  ),
];

function summarizer() {
  return createSummarizer({
    models: [
      summarizerModel({ id: "demo:demo", model: demo(), contextWindow: DEMO_CONTEXT_WINDOW }),
    ],
    timeoutMs: 5_000,
    estimator,
  });
}

const request = (overrides: Partial<SummarizeRequest>): SummarizeRequest => ({
  previousSummary: null,
  span: firstSpan,
  summaryBudget: SUMMARY_BUDGET_8K,
  ...overrides,
});

/** The summary as the model wrote it: without the references Fold appends itself. */
function bodyOf(summary: string): string {
  const at = summary.search(new RegExp(`^#{1,6}\\s*${VERBATIM_REFERENCES_HEADING}`, "m"));
  return at < 0 ? summary : summary.slice(0, at);
}

/** The text under one heading of a summary. */
function section(summary: string, heading: SummaryHeading): string {
  const start = summary.indexOf(`## ${heading}\n`);
  if (start < 0) return "";
  const rest = summary.slice(start + heading.length + 4);
  const next = rest.search(/^## /m);
  return next < 0 ? rest : rest.slice(0, next);
}

/** The headings of a summary, in the order they appear. */
const headingsIn = (summary: string) => [...summary.matchAll(/^## (.+)$/gm)].map((m) => m[1]);

/** One direct summarizer call to the demo model, the way Fold words it. */
async function summarizeDirectly(input: {
  span: FoldUIMessage[];
  previousSummary?: string;
  maxOutputTokens: number;
}) {
  const spanText = serializeSpan(input.span);
  const result = await generateText({
    model: demo(),
    instructions: summarizerInstructions(),
    prompt: summarizerPrompt({
      previousSummary: input.previousSummary ?? null,
      spanText,
      budgetTokens: input.maxOutputTokens,
    }),
    maxOutputTokens: input.maxOutputTokens,
  });
  return {
    text: result.text,
    usage: result.usage,
    finishReason: result.finishReason,
    spanText,
  };
}

/** A long span: `turns` requests, each with its own URL and quoted rule, and an answer with a number. */
function longSpan(turns: number): FoldUIMessage[] {
  return Array.from({ length: turns }, (_, i) => [
    user(`u${i}`, `Request ${i}: check https://example.com/page/${i} and keep "rule number ${i}".`),
    assistant(`a${i}`, `Page ${i} loads in ${i + 10} ms.\nDone with request ${i}.`),
  ]).flat();
}

describe("the demo model as summarizer", () => {
  it("writes a summary Fold accepts: six headings in order, the planted URL and quote kept", async () => {
    const result = await summarizer()(request({}));
    const body = bodyOf(result.summary);

    expect(result.model).toBe("demo:demo");
    expect(missingHeadings(result.summary)).toEqual([]);
    expect(headingsIn(body)).toEqual([...SUMMARY_HEADINGS]);
    expect(body).toContain(URL_1);
    expect(body).toContain(PATH_1);
    expect(section(body, "Constraints & preferences")).toContain(QUOTE_1);
    expect(section(body, "Constraints & preferences")).toContain("Budget must stay under 900 EUR.");
    expect(section(body, "Goal & open requests")).toContain(
      "Plan a 4-day trip to Lisbon in October.",
    );
    expect(section(body, "Current state & next step")).toContain("Next I will add restaurants.");
    expect(section(body, "Errors & fixes")).toContain("fetch_url: 403 Forbidden");
  });

  it("carries the first summary's items into a chained second one, newest first", async () => {
    const first = await summarizer()(request({}));
    const second = await summarizer()(
      request({ previousSummary: first.summary, span: secondSpan }),
    );
    const body = bodyOf(second.summary);
    const goals = section(body, "Goal & open requests");

    expect(missingHeadings(second.summary)).toEqual([]);
    expect(headingsIn(body)).toEqual([...SUMMARY_HEADINGS]);
    for (const planted of [URL_1, PATH_1, URL_2]) expect(body).toContain(planted);
    expect(section(body, "Constraints & preferences")).toContain(QUOTE_1);
    expect(section(body, "Constraints & preferences")).toContain(QUOTE_2);
    expect(goals.indexOf("Now book the flight.")).toBeLessThan(goals.indexOf("Plan a 4-day trip"));
    expect(goals.indexOf("Plan a 4-day trip")).toBeGreaterThan(-1);
    // The newer conclusion replaces the older one.
    expect(section(body, "Current state & next step").trim()).toBe(
      "- Shall I hold it for 24 hours?",
    );
  });

  it("stays within maxOutputTokens by dropping the oldest items, never a heading", async () => {
    const previousSummary = SUMMARY_HEADINGS.map((h) => `## ${h}\n- Older item under ${h}`).join(
      "\n\n",
    );
    const maxOutputTokens = 200;
    const { text, usage, finishReason } = await summarizeDirectly({
      span: longSpan(30),
      previousSummary,
      maxOutputTokens,
    });

    expect(usage.outputTokens).toBe(estimator.countText(text));
    expect(usage.outputTokens).toBeLessThanOrEqual(maxOutputTokens);
    expect(usage.outputTokens).toBeGreaterThan(maxOutputTokens / 2);
    expect(finishReason).toBe("stop");
    expect(headingsIn(text)).toEqual([...SUMMARY_HEADINGS]);
    expect(text).toContain("Request 29:");
    expect(text).toContain('"rule number 29"');
    expect(text).not.toContain("Request 0:");
    expect(text).not.toContain("Older item");
  });

  it("keeps every item of the previous summary when there is room, and never writes more than it read", async () => {
    const previousSummary = [
      "## Goal & open requests",
      "Ship the importer by Friday.",
      "## Constraints & preferences",
      "(not recorded)",
      "## Decisions & facts",
      "- Batch size is 500 rows.",
      `## ${VERBATIM_REFERENCES_HEADING}`,
      "- https://fold.example/appendix-is-folds-own",
    ].join("\n");
    const { text, usage, spanText } = await summarizeDirectly({
      span: secondSpan,
      previousSummary,
      maxOutputTokens: 2_000,
    });

    expect(section(text, "Goal & open requests")).toContain("- Ship the importer by Friday.");
    expect(section(text, "Decisions & facts")).toContain("- Batch size is 500 rows.");
    expect(text).not.toContain("(not recorded)");
    expect(text).not.toContain("appendix-is-folds-own");
    expect(usage.outputTokens ?? 0).toBeLessThanOrEqual(
      estimator.countText(previousSummary) + estimator.countText(spanText),
    );
  });

  it("gives the same summary to the same call", async () => {
    const a = await summarizeDirectly({ span: firstSpan, maxOutputTokens: 500 });
    const b = await summarizeDirectly({ span: firstSpan, maxOutputTokens: 500 });
    expect(a.text).toBe(b.text);
    expect(a.text.startsWith(`## ${SUMMARY_HEADINGS[0]}\n`)).toBe(true);
  });

  it("still chats when a chat prompt carries a summary with the six headings", async () => {
    const summary = SUMMARY_HEADINGS.map((h) => `## ${h}\n- Plan an October trip to Lisbon`).join(
      "\n",
    );
    const { text } = await generateText({
      model: demo(),
      instructions: "You are a helpful assistant in Fold, a chat app.",
      messages: [
        { role: "user", content: `<conversation-summary>\n${summary}\n</conversation-summary>` },
        { role: "user", content: "What budget should I plan for?" },
      ],
    });
    expect(text).toContain("summary of earlier turns");
    expect(headingsIn(text)).toEqual([]);
  });
});
