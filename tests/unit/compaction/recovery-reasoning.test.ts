import {
  APICallError,
  type LanguageModelV4CallOptions,
  type LanguageModelV4Prompt,
  type LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { expect, it } from "vitest";
import { createRecoveryMiddleware } from "@/lib/compaction/recovery";
import { trimToFit } from "@/lib/compaction/trim";
import { computeBudget } from "@/lib/context/budget";
import { createEstimator, unitsFromProviderPrompt } from "@/lib/context/tokens";
import { COMPACTION_DEFAULTS } from "@/lib/env";

/**
 * A reasoning model in a tool loop (DeepSeek V3.2 thinking / Qwen 3 through vLLM / any
 * OpenAI-compatible server): @ai-sdk/openai-compatible sends every step's reasoning back as
 * `reasoning_content`, and the server counts the current loop's. The loop's thinking, not its
 * tool results, fills the window. The provider refuses; recovery must make the retry smaller.
 */

const WINDOW = 8192;
const BUDGET = computeBudget(
  { contextWindow: WINDOW, maxOutputTokens: null },
  {
    ...COMPACTION_DEFAULTS,
  },
);
const REFUSE_ABOVE_CHARS = 24_000;

const WORDS = ["alpha", "river", "stone", "green", "table", "model", "value", "line"];
const prose = (chars: number, seed: number) => {
  const out: string[] = [];
  let n = 0;
  for (let i = 0; n < chars; i++) {
    const w = `${WORDS[(i * 3 + seed) % WORDS.length]}${i % 11}`;
    out.push(w);
    n += w.length + 1;
  }
  return out.join(" ").slice(0, chars);
};

function thinkingLoop(steps: number): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [
    { role: "system", content: "You are Fold." },
    {
      role: "user",
      content: [{ type: "text", text: "Check the four mirrors and tell me which is up." }],
    },
  ];
  for (let i = 0; i < steps; i++) {
    prompt.push({
      role: "assistant",
      content: [
        { type: "reasoning", text: prose(9_000, i) },
        {
          type: "tool-call",
          toolCallId: `call_${i}`,
          toolName: "fetch_url",
          input: { url: `https://mirror${i}.example.com/status` },
        },
      ],
    });
    prompt.push({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `call_${i}`,
          toolName: "fetch_url",
          output: { type: "text", value: `mirror ${i}: HTTP 200, 12 ms` },
        },
      ],
    });
  }
  return prompt;
}

/** Characters the server reads: text, reasoning, tool calls and results. */
function charsOf(prompt: LanguageModelV4Prompt): number {
  let n = 0;
  for (const m of prompt) {
    if (typeof m.content === "string") {
      n += m.content.length;
      continue;
    }
    for (const p of m.content as unknown as Array<Record<string, unknown>>) {
      if (typeof p.text === "string") n += p.text.length;
      if (p.type === "tool-call") n += JSON.stringify(p.input).length;
      if (p.type === "tool-result") n += JSON.stringify(p.output).length;
    }
  }
  return n;
}

const overflow = () =>
  new APICallError({
    message: "provider said 400",
    url: "http://vllm.local/v1/chat/completions",
    requestBodyValues: {},
    statusCode: 400,
    responseBody: JSON.stringify({
      object: "error",
      message: `This model's maximum context length is ${WINDOW} tokens. However, you requested 9600 tokens in the messages. Please reduce the length of the messages.`,
      type: "BadRequestError",
      code: 400,
    }),
    isRetryable: false,
  });

it("recovery shrinks a tool loop whose size is its reasoning, so the one retry fits", async () => {
  const sent: LanguageModelV4Prompt[] = [];
  const mock = new MockLanguageModelV4({
    doStream: async (options: LanguageModelV4CallOptions) => {
      sent.push(options.prompt);
      if (charsOf(options.prompt) > REFUSE_ABOVE_CHARS) throw overflow();
      const parts: LanguageModelV4StreamPart[] = [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Mirror 2 is up." },
        { type: "text-end", id: "t" },
        {
          type: "finish",
          finishReason: { unified: "stop", raw: "stop" },
          usage: {
            inputTokens: { total: 5000, noCache: 5000, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 5, text: 5, reasoning: 0 },
          },
        },
      ];
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
  const model = wrapLanguageModel({
    model: mock,
    middleware: createRecoveryMiddleware({
      modelId: "vllm:qwen3",
      budget: BUDGET,
      ratio: 1,
      estimator: createEstimator(),
      keepRecentToolResults: COMPACTION_DEFAULTS.keepRecentToolResults,
      toolOverheadTokens: 200,
    }),
  });
  const prompt = thinkingLoop(4);
  expect(charsOf(prompt)).toBeGreaterThan(REFUSE_ABOVE_CHARS);
  // Not the same size again (a reasoning part left as it was), refused again, and the user told
  // the conversation no longer fits.
  const result = await model.doStream({ prompt } as LanguageModelV4CallOptions);
  const reader = result.stream.getReader();
  while (!(await reader.read()).done) {}
  expect(sent).toHaveLength(2);
  expect(charsOf(sent[1] as LanguageModelV4Prompt)).toBeLessThanOrEqual(REFUSE_ABOVE_CHARS);
  // The newest step's reasoning (which a provider may verify, e.g. Anthropic's signature) is
  // sent as it was.
  const last = (sent[1] as LanguageModelV4Prompt).findLast((m) => m.role === "assistant");
  expect(JSON.stringify(last)).toContain(prose(9_000, 3).slice(-200));
});

it("keeps an OpenAI reasoning item with its step's call: the Responses API refuses a call without it", () => {
  const estimator = createEstimator();
  const prompt = thinkingLoop(3).map((message) =>
    message.role === "assistant"
      ? {
          ...message,
          content: message.content.map((part) =>
            part.type === "reasoning"
              ? { ...part, providerOptions: { openai: { itemId: "rs_1" } } }
              : part,
          ),
        }
      : message,
  ) as LanguageModelV4Prompt;
  const trimmed = trimToFit(prompt, {
    limitTokens: 1_000,
    keepRecentToolResults: 1,
    estimate: (messages) => estimator.estimate(unitsFromProviderPrompt(messages)),
    force: true,
  });
  const reasoning = trimmed.messages.flatMap((m) =>
    typeof m.content === "string" ? [] : m.content.filter((part) => part.type === "reasoning"),
  );
  expect(reasoning).toHaveLength(3);
});
