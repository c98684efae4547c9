import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { APICallError } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { summarizerModel } from "@/lib/chat/summarizer-models";
import {
  headingSkeleton,
  missingHeadings,
  NOT_RECORDED,
  SUMMARY_HEADINGS,
} from "@/lib/compaction/prompts";
import {
  createSummarizer,
  type SummarizeRequest,
  SummarizerFailedError,
  type SummarizerModel,
} from "@/lib/compaction/summarize";
import { createEstimator } from "@/lib/context/tokens";
import type { FoldUIMessage } from "@/lib/message/ui-message";

const metric = vi.fn();

const usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 50, text: 50, reasoning: 0 },
};

function reply(text: string, finish: "stop" | "length" = "stop"): LanguageModelV4GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: finish, raw: finish },
    usage,
    warnings: [],
  };
}

/** A valid summary: all six headings, short. */
const SUMMARY = SUMMARY_HEADINGS.map((h) => `## ${h}\nNone.`).join("\n\n");

const ok = (text = SUMMARY) => new MockLanguageModelV4({ doGenerate: async () => reply(text) });

/** Never answers; rejects when its abort signal fires (a hung provider). */
const hanging = () =>
  new MockLanguageModelV4({
    doGenerate: ({ abortSignal }) =>
      new Promise((_, reject) => {
        abortSignal?.addEventListener("abort", () => reject(abortSignal.reason), { once: true });
      }),
  });

const apiError = (statusCode: number) =>
  new APICallError({
    message: `provider said ${statusCode}`,
    url: "https://provider.test/v1/chat/completions",
    requestBodyValues: {},
    statusCode,
  });

const failing = (statusCode: number) =>
  new MockLanguageModelV4({
    doGenerate: async () => {
      throw apiError(statusCode);
    },
  });

const entry = (id: string, model: MockLanguageModelV4, contextWindow = 128_000): SummarizerModel =>
  summarizerModel({ id, model, contextWindow });

/** The user message of a recorded call: the prompt the summarizer read. */
function promptText(call: LanguageModelV4CallOptions | undefined): string {
  const user = call?.prompt.find((m) => m.role === "user");
  if (!user || typeof user.content === "string") return "";
  return user.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/** The `<conversation>` body of a prompt: the span text a call carried. */
function conversationOf(prompt: string): string {
  return /<conversation>\n([\s\S]*)\n<\/conversation>/.exec(prompt)?.[1] ?? "";
}

function message(index: number, words = 60): FoldUIMessage {
  const role = index % 2 === 0 ? "user" : "assistant";
  const filler = Array.from({ length: words }, (_, w) => `word${w}`).join(" ");
  return {
    id: `m${index}`,
    role,
    parts: [{ type: "text", text: `MARK-${index}-START ${filler} MARK-${index}-END` }],
  };
}

const span = (count: number, words?: number) =>
  Array.from({ length: count }, (_, i) => message(i, words));

const request = (overrides: Partial<SummarizeRequest> = {}): SummarizeRequest => ({
  previousSummary: null,
  span: span(6),
  summaryBudget: 600,
  ...overrides,
});

function markersIn(text: string): number[] {
  return [...text.matchAll(/MARK-(\d+)-START/g)].map((m) => Number(m[1]));
}

/** One summarizer model ("a:wordy") that gives `replies` in turn, then a plain summary. */
function answeringInTurn(...replies: LanguageModelV4GenerateResult[]) {
  const model = new MockLanguageModelV4({
    doGenerate: async () => replies.shift() ?? reply(SUMMARY),
  });
  const summarize = createSummarizer({
    models: [entry("a:wordy", model)],
    timeoutMs: 5_000,
    estimator: createEstimator(),
    onMetric: metric,
  });
  return { model, summarize };
}

beforeEach(() => {
  metric.mockClear();
});

describe("createSummarizer", () => {
  it("keeps a first section whose heading is worded otherwise than the summary's", async () => {
    const [goal, ...rest] = SUMMARY_HEADINGS;
    const reworded = [
      `## ${goal?.replace("Goal", "Goals")}\n- Deploy to eu-west-3 REWORDED-GOAL-9.`,
      ...rest.map((h) => `## ${h}\nNone.`),
    ].join("\n\n");
    const summarize = createSummarizer({
      models: [entry("a:reworded", ok(reworded))],
      timeoutMs: 5_000,
      estimator: createEstimator(),
      onMetric: metric,
    });
    const result = await summarize(request());
    expect(result.summary).toContain("REWORDED-GOAL-9");
  });

  it("keeps a summary written with bold headings whole, though a snippet in it has a # comment", async () => {
    // The goal first; under every other heading a snippet whose comment starts with "#".
    const bold = SUMMARY_HEADINGS.map((heading, i) => {
      const body =
        i === 0 ? "Ship the CSV export BOLD-GOAL-7." : "```sh\n# run migrations\nnpm test\n```";
      return `**${heading.replace(/^#+\s*/, "")}**\n${body}`;
    }).join("\n\n");
    const summarize = createSummarizer({
      models: [entry("a:bold", ok(`Here is the summary.\n\n${bold}`))],
      timeoutMs: 5_000,
      estimator: createEstimator(),
      onMetric: metric,
    });
    const result = await summarize(request());
    expect(result.summary).toContain("BOLD-GOAL-7");
    expect(result.summary).not.toContain("Here is the summary.");
  });

  it("falls through a timeout and a 500 to the next model, and names the one that succeeded", async () => {
    const slow = hanging();
    const broken = failing(500);
    const good = ok();
    const summarize = createSummarizer({
      models: [entry("a:slow", slow), entry("b:broken", broken), entry("c:good", good)],
      timeoutMs: 50,
      estimator: createEstimator(),
      onMetric: metric,
    });
    const result = await summarize(request());
    expect(result.model).toBe("c:good");
    expect(result.summary.startsWith(SUMMARY)).toBe(true);
    expect(result.attempts).toBe(3);
    expect(result.chunks).toBe(1);
    expect([slow, broken, good].map((m) => m.doGenerateCalls.length)).toEqual([1, 1, 1]);
  });

  it("passes the output ceiling, no SDK retries and the instructions to each call", async () => {
    const good = ok();
    const summarize = createSummarizer({
      models: [entry("a:good", good)],
      timeoutMs: 5_000,
      estimator: createEstimator(),
      onMetric: metric,
    });
    await summarize(request({ summaryBudget: 777 }));
    const call = good.doGenerateCalls[0];
    // Room is left for the headings a cut reply may not reach, and the prompt states the limit.
    const limit = 777 - createEstimator().countText(headingSkeleton());
    expect(call?.maxOutputTokens).toBe(limit);
    expect(promptText(call)).toContain(`cut off after ${limit} tokens`);
    expect(call?.prompt[0]?.role).toBe("system");
    expect(promptText(call)).toContain("<conversation>\n<user>\nMARK-0-START");
  });

  it("keeps a reply cut at the output limit and completes the headings it did not reach", async () => {
    const cut =
      '## Goal & open requests\nShip the importer to /srv/import.\n## Constraints & preferences\n- "never drop rows"\n## Current state & next step\nhalf a senten';
    const model = new MockLanguageModelV4({ doGenerate: async () => reply(cut, "length") });
    const summarize = createSummarizer({
      models: [entry("a:wordy", model)],
      timeoutMs: 5_000,
      estimator: createEstimator(),
      onMetric: metric,
    });
    const result = await summarize(request());
    // Its unfinished sections are asked for again; cut where it was, nothing is taken from that.
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(result.model).toBe("a:wordy");
    expect(result.cutReplies).toBe(2);
    expect(result.cutsRefilled).toBe(0);
    expect(result.summary).toContain("Ship the importer to /srv/import.");
    expect(result.summary).toContain('"never drop rows"');
    // The line the cut split is dropped: it may hold half an identifier.
    expect(result.summary).not.toContain("half a senten");
    expect(missingHeadings(result.summary)).toEqual([]);
    expect(result.summary).toContain(`## Errors & fixes\n${NOT_RECORDED}`);
  });

  it("a reply cut before the later headings keeps what the previous summary said under them", async () => {
    const previous = [
      "## Goal & open requests\nShip the importer.",
      "## Constraints & preferences\n- never drop rows",
      "## Decisions & facts\n- Use port 5433 for the staging database.",
      "## Current state & next step\nWriting the CSV reader.",
      "## Artifacts & references\n- /srv/import/reader.ts",
      "## Errors & fixes\n- ENOENT on /tmp/in.csv: the path was relative.",
    ].join("\n\n");
    const cut =
      "## Goal & open requests\nShip the importer, now with a dry-run flag.\n## Constraints & preferences\n- never drop rows\n## Decisions & facts\n";
    const model = new MockLanguageModelV4({ doGenerate: async () => reply(cut, "length") });
    const summarize = createSummarizer({
      models: [entry("a:wordy", model)],
      timeoutMs: 5_000,
      estimator: createEstimator(),
      onMetric: metric,
    });
    const result = await summarize(request({ previousSummary: previous }));
    expect(result.cutReplies).toBe(2);
    // What the reply wrote wins; what it never reached (or left empty) is the previous text.
    expect(result.summary).toContain("now with a dry-run flag");
    expect(result.summary).toContain("## Decisions & facts\n- Use port 5433");
    expect(result.summary).toContain("## Current state & next step\nWriting the CSV reader.");
    expect(result.summary).toContain("/srv/import/reader.ts");
    expect(result.summary).toContain("ENOENT on /tmp/in.csv");
    expect(result.summary).not.toContain(NOT_RECORDED);
  });

  it("a reply cut before its last headings: the sections it did not finish are asked for again, on their own, and say what the span adds", async () => {
    const previous = [
      "## Goal & open requests\nShip the importer.",
      "## Constraints & preferences\n- never drop rows",
      "## Current state & next step\nWriting the CSV reader.",
      "## Decisions & facts\n- Use port 5433 for the staging database.",
      "## Artifacts & references\n- /srv/import/reader.ts",
      "## Errors & fixes\nNone.",
    ].join("\n\n");
    // Cut where a wordy reply reaches its output limit: in its third section.
    const wordy = Array.from({ length: 150 }, (_, w) => `goal${w}`).join(" ");
    const cut = [
      `## Goal & open requests\nShip the importer with a dry-run flag; ${wordy}`,
      '## Constraints & preferences\n- never drop rows\n- "keep the logs under /var/log/import"',
      "## Current state & next step\nThe reader is done; the wri",
    ].join("\n");
    const sections = [
      "## Current state & next step\nReader done; the row writer is next.",
      "## Decisions & facts\n- Use port 5433.\n- Batches of 500 rows.",
      "## Artifacts & references\n- /srv/import/reader.ts\n- /srv/import/writer.ts",
      "## Errors & fixes\n- EACCES on /var/log/import: fixed with chown.",
    ].join("\n\n");
    const { model, summarize } = answeringInTurn(reply(cut, "length"), reply(sections));
    const result = await summarize(
      request({ previousSummary: previous, span: span(8, 80), summaryBudget: 300 }),
    );
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(result.cutReplies).toBe(1);
    expect(result.cutsRefilled).toBe(1);
    // The second call asks for the unfinished sections only, from the same messages.
    const second = promptText(model.doGenerateCalls[1]);
    expect(second).toContain(
      "## Current state & next step\n## Decisions & facts\n## Artifacts & references\n## Errors & fixes\n",
    );
    expect(second).not.toContain("## Goal & open requests\n## ");
    expect(conversationOf(second)).toBe(conversationOf(promptText(model.doGenerateCalls[0])));
    // What the cut reply wrote in full stays as it wrote it.
    expect(result.summary).toContain(`dry-run flag; ${wordy}`);
    expect(result.summary).toContain('"keep the logs under /var/log/import"');
    // The section the cut fell in, and those it never reached: the span's new facts, not only
    // the previous summary's.
    expect(result.summary).toContain("Reader done; the row writer is next.");
    expect(result.summary).not.toContain("the wri");
    expect(result.summary).toContain("Batches of 500 rows.");
    expect(result.summary).toContain("/srv/import/writer.ts");
    expect(result.summary).toContain("EACCES on /var/log/import");
    expect(missingHeadings(result.summary)).toEqual([]);
  });

  it("a cut reply's \"None.\" under earlier facts and constraints keeps them, and so does the second answer's", async () => {
    const previous = [
      "## Goal & open requests\nShip the importer.",
      "## Constraints & preferences\n- never drop rows",
      "## Current state & next step\nWriting the reader.",
      "## Decisions & facts\n- Use port 5433.",
      "## Artifacts & references\n- /srv/import/reader.ts",
      "## Errors & fixes\n- EACCES fixed with chown.",
    ].join("\n\n");
    // Cut in its fifth section, having written "None." (nothing new) under the fourth.
    const cut = [
      "## Goal & open requests\nShip the importer.",
      "## Constraints & preferences\nNone.",
      "## Current state & next step\nReader done.",
      "## Decisions & facts\nNone.",
      "## Artifacts & references\n- /srv/import/reader.ts\n- /srv/imp",
    ].join("\n");
    const sections = [
      "## Artifacts & references\n- /srv/import/reader.ts\n- /srv/import/writer.ts",
      "## Errors & fixes\nNone.",
    ].join("\n\n");
    const { summarize } = answeringInTurn(reply(cut, "length"), reply(sections));
    const result = await summarize(
      request({ previousSummary: previous, span: span(8, 80), summaryBudget: 400 }),
    );
    expect(result.cutsRefilled).toBe(1);
    expect(result.summary).toContain("## Constraints & preferences\n- never drop rows");
    expect(result.summary).toContain("## Decisions & facts\n- Use port 5433.");
    expect(result.summary).toContain("## Errors & fixes\n- EACCES fixed with chown.");
    expect(result.summary).toContain("/srv/import/writer.ts");
    expect(result.summary).toContain("## Current state & next step\nReader done.");
  });

  it("a second answer too long for the budget fills only the sections that fit; the others keep the previous text", async () => {
    const previous = [
      "## Decisions & facts\n- Use port 5433.",
      "## Artifacts & references\n- /srv/import/reader.ts",
    ].join("\n\n");
    const cut =
      "## Goal & open requests\nShip the importer.\n## Constraints & preferences\n- never";
    const essay = Array.from({ length: 600 }, (_, w) => `fact${w}`).join(" ");
    const sections = [
      "## Constraints & preferences\n- never drop rows",
      `## Decisions & facts\n${essay}`,
      "## Artifacts & references\n- /srv/import/writer.ts",
    ].join("\n\n");
    const { summarize } = answeringInTurn(reply(cut, "length"), reply(sections));
    const budget = 200;
    const result = await summarize(
      request({ previousSummary: previous, span: span(12, 80), summaryBudget: budget }),
    );
    expect(result.cutsRefilled).toBe(1);
    expect(result.summary).toContain("## Constraints & preferences\n- never drop rows");
    expect(result.summary).not.toContain("fact7");
    expect(result.summary).toContain("## Decisions & facts\n- Use port 5433.");
    expect(result.summary).toContain("## Artifacts & references\n- /srv/import/writer.ts");
    expect(createEstimator().countText(result.summary)).toBeLessThanOrEqual(budget);
  });

  it("the section the cut fell in keeps what the reply had written when the second answer retells it far shorter", async () => {
    const wordy = Array.from({ length: 120 }, (_, w) => `goal${w}`).join(" ");
    const cut = `## Goal & open requests\nShip the importer; ${wordy}.\n- and then`;
    const sections = [
      "## Goal & open requests\nShip the importer.",
      "## Decisions & facts\n- Batches of 500 rows.",
    ].join("\n\n");
    const { model, summarize } = answeringInTurn(reply(cut, "length"), reply(sections));
    const result = await summarize(request({ span: span(8, 80) }));
    // Asked for at least as much as the reply had written of the section the cut fell in.
    const asked = Number(/about (\d+) tokens/.exec(promptText(model.doGenerateCalls[1]))?.[1]);
    expect(asked).toBeGreaterThan(createEstimator().countText(wordy));
    expect(result.cutsRefilled).toBe(1);
    expect(result.summary).toContain(wordy);
    expect(result.summary).not.toContain("## Goal & open requests\nShip the importer.\n");
    expect(result.summary).toContain("## Decisions & facts\n- Batches of 500 rows.");
  });

  it("a second answer cut in its turn gives up its last section, and a line before its first heading is no section", async () => {
    const previous = "## Artifacts & references\n- /srv/import/reader.ts";
    // Cut in its first section: every section is asked for again.
    const cut = "## Goal & open requests\nShip the importer.\n- never";
    const sections = [
      "# Updated sections",
      "## Constraints & preferences\n- never drop rows",
      "## Decisions & facts\n- Batches of 500 rows.",
      "## Artifacts & references\n- /srv/import/wri",
    ].join("\n");
    const { summarize } = answeringInTurn(
      reply(cut, "length"),
      reply(`${sections}\n- /srv/import/half`, "length"),
    );
    const result = await summarize(request({ previousSummary: previous, span: span(8, 80) }));
    expect(result.cutsRefilled).toBe(1);
    expect(result.summary).toContain("## Goal & open requests\nShip the importer.");
    expect(result.summary).not.toContain("Updated sections");
    expect(result.summary).toContain("## Decisions & facts\n- Batches of 500 rows.");
    expect(result.summary).toContain("## Artifacts & references\n- /srv/import/reader.ts");
    expect(result.summary).not.toContain("/srv/import/wri");
  });

  it("a refill never makes the summary longer than its input: a section that would is left out, and the fold stands", async () => {
    const cut =
      "## Goal & open requests\nShip the importer.\n## Constraints & preferences\n- never";
    const essay = Array.from({ length: 200 }, (_, w) => `fact${w}`).join(" ");
    const sections = [
      "## Constraints & preferences\n- never drop rows",
      `## Decisions & facts\n${essay}`,
    ].join("\n\n");
    const { summarize } = answeringInTurn(reply(cut, "length"), reply(sections));
    // A budget far above what the short span holds.
    const result = await summarize(request({ span: span(2, 40), summaryBudget: 2_000 }));
    expect(result.cutsRefilled).toBe(1);
    expect(result.summary).toContain("## Constraints & preferences\n- never drop rows");
    expect(result.summary).not.toContain("fact7");
  });

  it("a second call that fails leaves the cut reply completed from the previous summary", async () => {
    const cut =
      "## Goal & open requests\nShip the importer.\n## Constraints & preferences\n- never";
    const replies: Array<() => LanguageModelV4GenerateResult> = [
      () => reply(cut, "length"),
      () => {
        throw apiError(500);
      },
    ];
    const model = new MockLanguageModelV4({
      doGenerate: async () => (replies.shift() ?? (() => reply(SUMMARY)))(),
    });
    const summarize = createSummarizer({
      models: [entry("a:wordy", model)],
      timeoutMs: 5_000,
      estimator: createEstimator(),
      onMetric: metric,
    });
    const result = await summarize(
      request({ previousSummary: "## Errors & fixes\n- ENOENT on /tmp/in.csv." }),
    );
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(result.model).toBe("a:wordy");
    expect(result.cutsRefilled).toBe(0);
    expect(result.summary).toContain("Ship the importer.");
    expect(result.summary).toContain("ENOENT on /tmp/in.csv");
  });

  it("a reply cut inside a section of facts keeps the previous summary's facts it had not reached, whatever the second call does", async () => {
    const facts = Array.from({ length: 12 }, (_, i) => `- Fact ${i + 1}: port ${5400 + i}.`);
    const previous = `## Decisions & facts\n${facts.join("\n")}`;
    // Cut after five of the twelve, in the middle of the sixth.
    const cut = [
      "## Goal & open requests\nShip the importer.",
      "## Constraints & preferences\n- never drop rows",
      `## Decisions & facts\n${facts.slice(0, 5).join("\n")}\n- Fact 6: po`,
    ].join("\n");
    const failingSecond = new MockLanguageModelV4({
      doGenerate: async () => {
        if (failingSecond.doGenerateCalls.length === 1) return reply(cut, "length");
        throw apiError(500);
      },
    });
    const retold = `## Decisions & facts\n${facts.slice(0, 2).join("\n")}`;
    for (const model of [
      failingSecond,
      answeringInTurn(reply(cut, "length"), reply(retold)).model,
    ]) {
      const summarize = createSummarizer({
        models: [entry("a:wordy", model)],
        timeoutMs: 5_000,
        estimator: createEstimator(),
        onMetric: metric,
      });
      const result = await summarize(request({ previousSummary: previous, span: span(8, 80) }));
      for (const fact of facts) expect(result.summary).toContain(fact);
      expect(result.summary).toContain("Ship the importer.");
    }
  });

  it("the facts a cut did not reach come back only as far as the summary's budget allows: a summary never grows fold by fold", async () => {
    const estimator = createEstimator();
    const facts = Array.from(
      { length: 12 },
      (_, i) => `- Fact ${i + 1}: the importer's batch ${i} goes to /srv/import/batch-${i}.csv.`,
    );
    const previous = `## Decisions & facts\n${facts.join("\n")}`;
    const cut = [
      "## Goal & open requests\nShip the importer, with a dry-run flag and a progress bar.",
      `## Decisions & facts\n${facts.slice(0, 5).join("\n")}\n- Fact 6: the`,
    ].join("\n");
    const replies = [reply(cut, "length")];
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        const next = replies.shift();
        if (next) return next;
        throw apiError(500);
      },
    });
    const summarize = createSummarizer({
      models: [entry("a:wordy", model)],
      timeoutMs: 5_000,
      estimator,
      onMetric: metric,
    });
    const room = estimator.countText(previous);
    const result = await summarize(
      request({ previousSummary: previous, span: span(8, 80), summaryBudget: room - 40 }),
    );
    expect(estimator.countText(result.summary)).toBeLessThanOrEqual(room);
    const kept = facts.map((fact) => result.summary.includes(fact));
    // The first ones it had not reached, in order, and not all of them.
    expect(kept.slice(0, 6)).toEqual([true, true, true, true, true, true]);
    expect(kept.indexOf(false)).toBeGreaterThan(5);
    expect(kept.slice(kept.indexOf(false)).every((k) => !k)).toBe(true);
  });

  it("completes a summary that skipped headings, in order, without asking again", async () => {
    const partial =
      "## Decisions & facts\nUse port 5433.\n## Goal & open requests\nShip the importer.";
    const model = ok(partial);
    const summarize = createSummarizer({
      models: [entry("a:forgetful", model)],
      timeoutMs: 5_000,
      estimator: createEstimator(),
      onMetric: metric,
    });
    const result = await summarize(request());
    expect(model.doGenerateCalls).toHaveLength(1);
    const headings = result.summary.split("\n").filter((l) => l.startsWith("## "));
    expect(headings).toEqual(SUMMARY_HEADINGS.map((h) => `## ${h}`));
    expect(result.summary).toContain("## Decisions & facts\nUse port 5433.");
  });

  it("throws SummarizerFailedError listing every attempt when all models fail", async () => {
    const summarize = createSummarizer({
      models: [
        entry("a:slow", hanging()),
        entry("b:broken", failing(503)),
        entry("c:terse", ok("ok")),
        entry("d:chatty", ok("Sure! Here is what I think about the importer, in detail.")),
      ],
      timeoutMs: 30,
      estimator: createEstimator(),
      onMetric: metric,
    });
    const error = await summarize(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SummarizerFailedError);
    const attempts = (error as SummarizerFailedError).attempts;
    expect(attempts.map((a) => a.model)).toEqual(["a:slow", "b:broken", "c:terse", "d:chatty"]);
    expect(attempts[0]?.error.message).toMatch(/timed out after 30 ms/);
    expect(APICallError.isInstance(attempts[1]?.error)).toBe(true);
    expect(attempts[2]?.error.message).toMatch(/too short/);
    expect(attempts[3]?.error.message).toMatch(/none of the summary's headings/);
    expect(metric).not.toHaveBeenCalled();
  });

  it("stops the cascade when the caller aborts", async () => {
    const slow = hanging();
    const next = ok();
    const summarize = createSummarizer({
      models: [entry("a:slow", slow), entry("b:next", next)],
      timeoutMs: 60_000,
      estimator: createEstimator(),
      onMetric: metric,
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("turn cancelled")), 20);
    const error = await summarize(request({ signal: controller.signal })).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(SummarizerFailedError);
    expect(slow.doGenerateCalls).toHaveLength(1);
    expect(next.doGenerateCalls).toHaveLength(0);
  });

  it("rejects a summary longer than its input", async () => {
    const padded = `${SUMMARY}\n${"The assistant restated everything at great length. ".repeat(200)}`;
    const verbose = ok(padded);
    const summarize = createSummarizer({
      models: [entry("a:verbose", verbose)],
      timeoutMs: 5_000,
      estimator: createEstimator(),
      onMetric: metric,
    });
    const error = await summarize(request({ span: span(2, 20), summaryBudget: 4_000 })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SummarizerFailedError);
    expect((error as SummarizerFailedError).attempts[0]?.error.message).toMatch(
      /longer than its input/,
    );
  });

  it("chunks a span bigger than the model's window on message boundaries, each message sent once", async () => {
    const estimator = createEstimator();
    const good = ok();
    const contextWindow = 3_000;
    const summaryBudget = 200;
    const messages = span(40);
    const summarize = createSummarizer({
      models: [entry("a:small", good, contextWindow)],
      timeoutMs: 5_000,
      estimator,
    });
    const result = await summarize(request({ span: messages, summaryBudget }));

    const prompts = good.doGenerateCalls.map(promptText);
    expect(prompts.length).toBeGreaterThan(2);
    expect(result.chunks).toBe(prompts.length);
    const sent = prompts.flatMap((p) => markersIn(conversationOf(p)));
    expect(sent).toEqual(messages.map((_, i) => i)); // every message exactly once, in order
    for (const prompt of prompts) {
      // Whole messages only: every START has its END in the same request.
      const conversation = conversationOf(prompt);
      for (const i of markersIn(conversation)) expect(conversation).toContain(`MARK-${i}-END`);
      const system = good.doGenerateCalls[0]?.prompt[0];
      const systemText = system?.role === "system" ? system.content : "";
      const requestTokens = estimator.countText(systemText) + estimator.countText(prompt);
      expect(requestTokens).toBeLessThanOrEqual(contextWindow - summaryBudget);
    }
    // Each later chunk folds into the running summary.
    expect(prompts[0]).not.toContain("<previous-summary>");
    for (const prompt of prompts.slice(1)) expect(prompt).toContain("<previous-summary>");
    const sentTokens = prompts.reduce((n, p) => n + estimator.countText(conversationOf(p)), 0);
    expect(result.inputTokens).toBe(sentTokens);
  });

  it("reads a message bigger than a whole chunk in pieces, all of it sent once, each piece within a chunk", async () => {
    const estimator = createEstimator();
    const good = ok();
    // A pasted document on one line: nowhere to break it but inside the line.
    const text = `HUGE-HEAD ${"data ".repeat(10_000)}HUGE-MIDDLE ${"data ".repeat(10_000)}HUGE-TAIL`;
    const huge: FoldUIMessage = { id: "huge", role: "user", parts: [{ type: "text", text }] };
    const messages = [message(0), huge, message(2)];
    const summarize = createSummarizer({
      models: [entry("a:small", good, 4_000)],
      timeoutMs: 5_000,
      estimator,
    });
    const result = await summarize(request({ span: messages, summaryBudget: 300 }));
    const conversations = good.doGenerateCalls.map((c) => conversationOf(promptText(c)));
    const pieces = conversations.filter((c) => c.includes("[One long message, part "));
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces) {
      expect(estimator.countText(piece)).toBeLessThan(4_000 - 300);
      expect(piece).not.toMatch(/chars omitted/);
      // Each piece is a whole block: its tags open and close within it.
      expect(piece.match(/<user>/g)?.length).toBe(piece.match(/<\/user>/g)?.length);
    }
    // Read in order, the pieces hold the message whole.
    const read = conversations
      .join("\n")
      .replace(/\[One long message, part \d+ of \d+\]/g, "")
      .replace(/<\/?user>|<\/?assistant>/g, "")
      .replace(/\n/g, "");
    expect(read).toContain(text);
    expect(conversations.flatMap(markersIn)).toEqual([0, 2]);
    expect(result.chunks).toBe(conversations.length);
  });

  it("reads a tool loop bigger than a whole chunk step by step, every step sent once", async () => {
    const good = ok();
    const filler = Array.from({ length: 300 }, (_, w) => `page${w}`).join(" ");
    // One stored reply of twenty steps, each a page fetched: far more than one chunk holds.
    const loop: FoldUIMessage = {
      id: "loop",
      role: "assistant",
      parts: Array.from({ length: 20 }, (_, i) => [
        { type: "step-start" as const },
        {
          type: "tool-fetch_url" as const,
          toolCallId: `call-${i}`,
          state: "output-available" as const,
          input: { url: `https://example.com/${i}` },
          output: { text: `STEP-${i}-START ${filler} STEP-${i}-END` },
        },
      ]).flat() as FoldUIMessage["parts"],
    };
    const summarize = createSummarizer({
      models: [entry("a:small", good, 4_000)],
      timeoutMs: 5_000,
      estimator: createEstimator(),
    });
    await summarize(request({ span: [message(0), loop], summaryBudget: 300 }));
    const conversations = good.doGenerateCalls.map((c) => conversationOf(promptText(c)));
    const steps = conversations.flatMap((c) =>
      [...c.matchAll(/STEP-(\d+)-END/g)].map((m) => Number(m[1])),
    );
    expect(steps).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it("halves the chunk after a 400 and retries on the same model", async () => {
    let calls = 0;
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        calls += 1;
        if (calls === 1) throw apiError(400);
        return reply(SUMMARY);
      },
    });
    const messages = span(30);
    const summarize = createSummarizer({
      models: [entry("a:picky", model, 128_000), entry("b:unused", ok())],
      timeoutMs: 5_000,
      estimator: createEstimator(),
      onMetric: metric,
    });
    const result = await summarize(request({ span: messages, summaryBudget: 1_000 }));
    const chunks = model.doGenerateCalls.map((c) => markersIn(conversationOf(promptText(c))));
    expect(chunks[0]).toHaveLength(30); // the first try carried the whole span
    const firstTokens = createEstimator().countText(
      conversationOf(promptText(model.doGenerateCalls[0])),
    );
    const secondTokens = createEstimator().countText(
      conversationOf(promptText(model.doGenerateCalls[1])),
    );
    expect(secondTokens).toBeLessThanOrEqual(Math.ceil(firstTokens / 2) + 10);
    expect(chunks.slice(1).flat()).toEqual(messages.map((_, i) => i));
    expect(result.model).toBe("a:picky");
    expect(result.chunks).toBe(chunks.length - 1);
  });

  it("reports latency as a metric", async () => {
    let clock = 1_000;
    const summarize = createSummarizer({
      models: [entry("a:good", ok())],
      timeoutMs: 5_000,
      estimator: createEstimator(),
      onMetric: metric,
      now: () => {
        clock += 250;
        return clock;
      },
    });
    await summarize(request());
    expect(metric).toHaveBeenCalledWith("summarize.latency_ms", {
      model: "a:good",
      ms: 250,
      chunks: 1,
    });
  });
});

describe("createSummarizer with nothing new to fold", () => {
  /** A previous summary of about 1,500 tokens, each section with a fact to keep. */
  const long = SUMMARY_HEADINGS.map(
    (h, i) =>
      `## ${h}\n- FACT-${i} deploy key k-${i}7f3\n${"- an old resolved detail. ".repeat(50)}`,
  ).join("\n\n");
  /** What a model that shortens it well writes: every fact, none of the old detail. */
  const shorter = SUMMARY_HEADINGS.map((h, i) => `## ${h}\n- FACT-${i} deploy key k-${i}7f3`).join(
    "\n\n",
  );
  const cascade = (...models: [string, MockLanguageModelV4][]) =>
    createSummarizer({
      models: models.map(([id, model]) => entry(id, model)),
      timeoutMs: 5_000,
      estimator: createEstimator(),
      onMetric: metric,
    });

  it("returns a summary within its budget as it is, without a call", async () => {
    const model = ok();
    const result = await cascade(["a:good", model])(
      request({ previousSummary: SUMMARY, span: [], summaryBudget: 600 }),
    );
    expect(model.doGenerateCalls).toHaveLength(0);
    expect(result.summary).toBe(SUMMARY);
  });

  it("shortens a summary over its budget on its own: the model reads all of it and is asked for the budget", async () => {
    const model = ok(shorter);
    const result = await cascade(["a:good", model])(
      request({ previousSummary: long, span: [], summaryBudget: 400 }),
    );
    expect(model.doGenerateCalls).toHaveLength(1);
    const prompt = promptText(model.doGenerateCalls[0]);
    expect(prompt).toContain("FACT-5 deploy key k-57f3");
    expect(prompt).toMatch(/must fit in about \d+/);
    expect(prompt).not.toContain("<conversation>");
    expect(result).toMatchObject({ summary: shorter, model: "a:good", chunks: 1 });
  });

  it("refuses a shortened summary still over its budget and asks the next model", async () => {
    const wordy = ok(long);
    const brief = ok(shorter);
    const result = await cascade(
      ["a:wordy", wordy],
      ["b:brief", brief],
    )(request({ previousSummary: long, span: [], summaryBudget: 400 }));
    expect(wordy.doGenerateCalls).toHaveLength(1);
    expect(brief.doGenerateCalls).toHaveLength(1);
    expect(result.model).toBe("b:brief");

    const error = await cascade(["a:wordy", ok(long)])(
      request({ previousSummary: long, span: [], summaryBudget: 400 }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SummarizerFailedError);
    expect((error as SummarizerFailedError).attempts[0]?.error.message).toMatch(
      /still over its budget/,
    );
  });
});
