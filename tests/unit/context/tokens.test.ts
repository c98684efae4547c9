import { convertToModelMessages, type ModelMessage, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { classRatios } from "@/lib/context/calibration";
import { emptyClassTokens } from "@/lib/context/content-class";
import {
  applyRatio,
  createEstimator,
  IMAGE_DEFAULT_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  PDF_TOKENS_PER_PAGE,
  TOOL_CALL_OVERHEAD_TOKENS,
  TOOL_RESULT_OVERHEAD_TOKENS,
  unitsFromModelMessage,
  unitsFromUIMessage,
} from "@/lib/context/tokens";
import { rowToUIMessage } from "@/lib/message/ui-message";

const pdfDataUrl = `data:application/pdf;base64,${Buffer.alloc(90_000, 7).toString("base64")}`;
const pngDataUrl = `data:image/png;base64,${Buffer.alloc(2_000, 1).toString("base64")}`;

/** A conversation with text, files, an image, tool calls (ok, failed) across steps. */
const conversation: UIMessage[] = [
  {
    id: "u1",
    role: "user",
    parts: [
      { type: "text", text: "What is the weather in Paris? Also read the attached report." },
      { type: "file", mediaType: "application/pdf", filename: "report.pdf", url: pdfDataUrl },
    ],
  },
  {
    id: "a1",
    role: "assistant",
    parts: [
      { type: "step-start" },
      { type: "reasoning", text: "The user wants the weather; call the tool." },
      { type: "text", text: "Let me check the weather for you." },
      {
        type: "tool-getWeather",
        toolCallId: "call-1",
        state: "output-available",
        input: { city: "Paris", unit: "celsius" },
        output: { temperature: 21, conditions: "sunny", humidity: 0.4 },
      },
      { type: "step-start" },
      {
        type: "tool-lookupAirport",
        toolCallId: "call-2",
        state: "output-error",
        input: { code: "XYZ" },
        errorText: "No airport with code XYZ",
      },
      { type: "step-start" },
      { type: "text", text: "It is 21 °C and sunny in Paris. The airport lookup failed." },
      { type: "source-url", sourceId: "s1", url: "https://weather.example/paris" },
    ],
  },
  {
    id: "u2",
    role: "user",
    parts: [
      { type: "text", text: "Thanks! Here is a photo of the view." },
      { type: "file", mediaType: "image/png", url: pngDataUrl },
    ],
  },
];

const userText = (id: string, text: string): UIMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text }],
});

describe("adapters", () => {
  it("count a UIMessage conversation and its converted ModelMessages the same", async () => {
    const estimator = createEstimator();
    const modelMessages = await convertToModelMessages(conversation);

    const fromUI = estimator.estimateUIMessages(conversation);
    const fromModel = estimator.estimateModelMessages(modelMessages);

    expect(modelMessages.length).toBeGreaterThan(conversation.length); // the split really happened
    expect(fromUI).toBe(fromModel);
    expect(fromUI).toBeGreaterThan(PDF_TOKENS_PER_PAGE + IMAGE_DEFAULT_TOKENS);
  });

  it("produce the same units in the same order", async () => {
    const modelMessages = await convertToModelMessages(conversation);
    const uiUnits = conversation.flatMap((m) => unitsFromUIMessage(m).units);
    const modelUnits = modelMessages.flatMap((m) => unitsFromModelMessage(m).units);

    expect(uiUnits).toEqual(modelUnits);
    expect(uiUnits.map((u) => u.type)).toEqual([
      "text",
      "file",
      "text",
      "tool-call",
      "tool-result",
      "tool-call",
      "tool-result",
      "text",
      "text",
      "image",
    ]);
  });

  it("charge one message overhead per provider message a UI message becomes", async () => {
    const modelMessages = await convertToModelMessages(conversation);
    const assistant = unitsFromUIMessage(conversation[1] as UIMessage);
    // a1 → assistant(text, call) · tool(result) · assistant(call) · tool(error) · assistant(text)
    expect(assistant.wireMessages).toBe(5);
    expect(modelMessages).toHaveLength(1 + 5 + 1);
  });

  it("serialize tool calls as name + JSON arguments and results as their output", () => {
    const estimator = createEstimator();
    const call = unitsFromUIMessage(conversation[1] as UIMessage).units.find(
      (u) => u.type === "tool-call",
    );
    expect(call).toEqual({
      type: "tool-call",
      toolName: "getWeather",
      input: '{"city":"Paris","unit":"celsius"}',
    });
    const tokens = estimator.estimate([{ units: [call ?? { type: "text", text: "" }] }]);
    expect(tokens).toBe(
      estimator.countText('getWeather {"city":"Paris","unit":"celsius"}') +
        TOOL_CALL_OVERHEAD_TOKENS +
        MESSAGE_OVERHEAD_TOKENS,
    );
    // A call, its framing included, is a class of its own: families render calls their own way.
    const classes = estimator.classTokens([{ units: [call ?? { type: "text", text: "" }] }]);
    expect(classes.call).toBe(
      estimator.countText('getWeather {"city":"Paris","unit":"celsius"}') +
        TOOL_CALL_OVERHEAD_TOKENS,
    );
    expect(classes.json + classes.digits1 + classes.digits2 + classes.digits3).toBe(0);
  });
});

describe("excluded parts", () => {
  const plain = userText("m", "x");
  const base: UIMessage = {
    id: "a",
    role: "assistant",
    parts: [{ type: "text", text: "The answer is 42." }],
  };

  it("reasoning, sources, step-start, data-* and the compaction trace count zero", () => {
    const estimator = createEstimator();
    const noisy: UIMessage = {
      id: "a",
      role: "assistant",
      parts: [
        { type: "step-start" },
        { type: "reasoning", text: "Long private reasoning ".repeat(200) },
        {
          type: "tool-compact_context",
          toolCallId: "trace-1",
          state: "output-available",
          input: { reason: "threshold" },
          output: { tokensBefore: 7000, tokensAfter: 2000, summary: "A long summary ".repeat(100) },
        },
        {
          type: "dynamic-tool",
          toolName: "compact_context",
          toolCallId: "trace-2",
          state: "input-available",
          input: { reason: "manual" },
        },
        { type: "text", text: "The answer is 42." },
        { type: "data-progress", data: { percent: 50, note: "working ".repeat(100) } },
        { type: "source-url", sourceId: "s", url: "https://example.com/a/very/long/path" },
      ],
    };
    expect(estimator.estimateUIMessages([noisy])).toBe(estimator.estimateUIMessages([base]));
    expect(unitsFromUIMessage(noisy).units).toEqual([{ type: "text", text: "The answer is 42." }]);
    expect(estimator.estimateUIMessages([plain])).toBeGreaterThan(0);
  });

  it("an earlier turn's reasoning and the compaction trace count zero in ModelMessages too", () => {
    const estimator = createEstimator();
    const question: ModelMessage = { role: "user", content: "And then?" };
    const messages: ModelMessage[] = [
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Thinking ".repeat(300) },
          { type: "tool-call", toolCallId: "t", toolName: "compact_context", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "t",
            toolName: "compact_context",
            output: { type: "text", value: "summary ".repeat(300) },
          },
        ],
      },
      question,
    ];
    expect(estimator.estimateModelMessages(messages)).toBe(
      estimator.estimateModelMessages([question]),
    );
  });

  it("the reasoning of the loop running since the latest user message counts as its text", () => {
    const estimator = createEstimator();
    const thinking = "Thinking about which page to read next. ".repeat(50);
    const question: ModelMessage = { role: "user", content: "Read the pages." };
    const step = (reasoning: string): ModelMessage => ({
      role: "assistant",
      content: [
        ...(reasoning ? [{ type: "reasoning" as const, text: reasoning }] : []),
        { type: "tool-call", toolCallId: "c1", toolName: "fetch_url", input: { url: "a" } },
      ],
    });
    const withThinking = estimator.estimateModelMessages([question, step(thinking)]);
    const without = estimator.estimateModelMessages([question, step("")]);
    expect(withThinking - without).toBe(estimator.countText(thinking));
    // The same step before a later user message is an earlier turn: providers drop its thinking.
    expect(estimator.estimateModelMessages([step(thinking), question])).toBe(
      estimator.estimateModelMessages([step(""), question]),
    );
  });
});

describe("memoization", () => {
  const history = Array.from({ length: 1_000 }, (_, i) =>
    userText(`m${i}`, `Message number ${i}: ${"some words about the topic ".repeat(i % 7)}`),
  );

  it("re-estimating an unchanged 1,000-message history does no tokenizer work", () => {
    const estimator = createEstimator();
    const first = estimator.estimateUIMessages(history);
    const calls = estimator.stats.tokenizerCalls;
    expect(calls).toBe(1_000);

    const again = estimator.estimateUIMessages(history.map((m) => structuredClone(m)));
    expect(again).toBe(first);
    expect(estimator.stats.tokenizerCalls).toBe(calls);
    expect(estimator.stats.cacheHits).toBe(1_000);
  });

  it("changing one message costs exactly one tokenizer call", () => {
    const estimator = createEstimator();
    const before = estimator.estimateUIMessages(history);
    const calls = estimator.stats.tokenizerCalls;

    const edited = history.map((m, i) =>
      i === 500 ? userText(m.id, "An edited message with rather more words in it than before.") : m,
    );
    const after = estimator.estimateUIMessages(edited);
    expect(estimator.stats.tokenizerCalls).toBe(calls + 1);
    expect(after).not.toBe(before);
  });

  it("builds a stored message's units once, however often a turn estimates it", () => {
    const stored = rowToUIMessage({
      id: "s1",
      role: "user",
      parts: [{ type: "text", text: "Stored once, counted many times." }],
      metadata: null,
    });
    expect(unitsFromUIMessage(stored)).toBe(unitsFromUIMessage(stored));

    // A message still being written (not from storage) is read afresh: an edit in place shows.
    const live = userText("l1", "first words");
    const before = unitsFromUIMessage(live);
    (live.parts[0] as { text: string }).text = "other words entirely";
    expect(unitsFromUIMessage(live)).not.toBe(before);
    expect(unitsFromUIMessage(live).units).toEqual([
      { type: "text", text: "other words entirely" },
    ]);
  });

  it("reuses a stored message's units and metadata across reads of the same content, never across different content", () => {
    const row = (text: string, contentKey: string) => ({
      id: "k1",
      role: "user" as const,
      parts: [{ type: "text", text }],
      metadata: { pinned: true },
      contentKey,
    });
    // Two reads of one row (two turns) give two objects with the same content key.
    const first = rowToUIMessage(row("Read on one turn.", "k1:aaa"));
    const second = rowToUIMessage(row("Read on one turn.", "k1:aaa"));
    expect(second).not.toBe(first);
    expect(unitsFromUIMessage(second)).toBe(unitsFromUIMessage(first));
    expect(second.metadata).toBe(first.metadata);
    expect(Object.isFrozen(second.metadata)).toBe(true);

    // The row edited in place: same id, new content, new key — its units are its own.
    const edited = rowToUIMessage(row("Edited since.", "k1:bbb"));
    expect(unitsFromUIMessage(edited).units).toEqual([{ type: "text", text: "Edited since." }]);
  });

  it("keeps the cache bounded", () => {
    const estimator = createEstimator({ cacheMaxEntries: 100 });
    estimator.estimateUIMessages(history);
    expect(estimator.cacheSize).toBe(100);
  });
});

describe("modalities", () => {
  it("prices an image from a huge data URL at the fixed cost without tokenizing it", () => {
    const estimator = createEstimator();
    const huge = `data:image/png;base64,${"QUFB".repeat(2_000_000)}`; // 8 MB of base64
    const message: UIMessage = {
      id: "img",
      role: "user",
      parts: [{ type: "file", mediaType: "image/png", url: huge }],
    };
    expect(estimator.estimateUIMessages([message])).toBe(
      IMAGE_DEFAULT_TOKENS + MESSAGE_OVERHEAD_TOKENS,
    );
    expect(estimator.stats.tokenizerCalls).toBe(0);
  });

  it("prices a PDF by its size in pages", () => {
    const estimator = createEstimator();
    const message: UIMessage = {
      id: "pdf",
      role: "user",
      parts: [{ type: "file", mediaType: "application/pdf", url: pdfDataUrl }],
    };
    // 90,000 bytes ≈ 2 pages at 60,000 bytes per page
    expect(estimator.estimateUIMessages([message])).toBe(
      2 * PDF_TOKENS_PER_PAGE + MESSAGE_OVERHEAD_TOKENS,
    );
  });

  it("counts special-token look-alikes in user text as text", () => {
    const estimator = createEstimator();
    expect(estimator.countText("see <|endoftext|> here")).toBeGreaterThan(3);
  });
});

describe("ratio", () => {
  it("multiplies the total and rounds up", () => {
    const estimator = createEstimator();
    const base = estimator.estimateUIMessages(conversation);
    expect(estimator.estimateUIMessages(conversation, { ratio: 1.15 })).toBe(
      Math.ceil(base * 1.15),
    );
    expect(estimator.estimateUIMessages(conversation, { ratio: 2 })).toBe(base * 2);
  });

  it("keeps a writing system's negative token ratio when its letters carry the price", () => {
    // Qwen on Hindi: the price rises with letters per token, so the token term is below zero.
    const raw = { ...emptyClassTokens(), devanagari: 100, devanagariLetters: 250 };
    const ratios = { ...classRatios(null), devanagari: -0.2, devanagariLetters: 1.2 };
    expect(applyRatio(raw, ratios)).toBe(280);
    // A class that is not weighed by letters never takes a negative ratio: it counts at 1.
    expect(applyRatio({ ...emptyClassTokens(), prose: 100 }, { ...ratios, prose: -0.5 })).toBe(100);
  });

  it("is 1 by default", () => {
    const estimator = createEstimator();
    const units = [{ type: "text" as const, text: "hello world" }];
    expect(estimator.estimate([{ units }])).toBe(
      estimator.countText("hello world") + MESSAGE_OVERHEAD_TOKENS,
    );
  });
});

describe("tool results", () => {
  it("count the result text plus its framing", () => {
    const estimator = createEstimator();
    const tokens = estimator.estimate([
      { units: [{ type: "tool-result", toolName: "fetch_url", output: "hello world" }] },
    ]);
    expect(tokens).toBe(
      estimator.countText("hello world") + TOOL_RESULT_OVERHEAD_TOKENS + MESSAGE_OVERHEAD_TOKENS,
    );
  });
});
