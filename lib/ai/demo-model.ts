/**
 * The offline demo model (DESIGN §13): a real LanguageModelV4 that needs no key
 * and no network. It answers from the conversation it is given, reports honest
 * usage counted with the one estimator, and rejects an over-long prompt the way
 * a real provider does, so compaction and recovery can be seen working. When
 * Fold's tools are offered it calls them for the questions they answer (see
 * demo-tools.ts); the reply text itself is composed in demo-reply.ts. Asked by
 * compaction to summarize, it writes an extractive summary (demo-summary.ts).
 */
import {
  APICallError,
  type LanguageModelV4,
  type LanguageModelV4CallOptions,
  type LanguageModelV4FinishReason,
  type LanguageModelV4Prompt,
  type LanguageModelV4StreamPart,
  type LanguageModelV4Text,
  type LanguageModelV4ToolCall,
  type LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { delay } from "@ai-sdk/provider-utils";
import {
  type CountMessage,
  defaultEstimator,
  type TokenEstimator,
  unitsFromProviderPrompt,
} from "@/lib/context/tokens";
import { composeReply } from "./demo-reply";
import { composeSummary, isSummarizerCall } from "./demo-summary";
import { planToolCall } from "./demo-tools";

/** Small on purpose, so compaction shows up within a few minutes of chatting. */
export const DEMO_CONTEXT_WINDOW = 8192;
/** Output ceiling the demo model advertises; its replies are far shorter. */
export const DEMO_MAX_OUTPUT_TOKENS = 1024;
/** Delay between streamed chunks: fast enough to read along, slow enough to see streaming. */
export const DEMO_CHUNK_DELAY_MS = 15;
/** Words per streamed text delta, like a provider's small token groups. */
const WORDS_PER_CHUNK = 3;
/** Where the overflow error claims to come from (there is no network call). */
const DEMO_URL = "demo://offline/chat/completions";

export const DEMO_PROVIDER = "demo";
export const DEMO_MODEL_ID = "demo";

export type DemoModelOptions = {
  /** Delay between streamed chunks; 0 in tests. */
  chunkDelayMs?: number;
  /** The estimator that plays the demo model's tokenizer; the shared one by default. */
  estimator?: TokenEstimator;
};

type DemoTurn = {
  /** What the model says: reply text, or one call to an offered tool. */
  output: LanguageModelV4Text | LanguageModelV4ToolCall;
  inputTokens: number;
  outputTokens: number;
  finishReason: LanguageModelV4FinishReason;
  responseId: string;
};

export function createDemoModel(options: DemoModelOptions = {}): LanguageModelV4 {
  const chunkDelayMs = options.chunkDelayMs ?? DEMO_CHUNK_DELAY_MS;
  const estimator = options.estimator ?? defaultEstimator;

  return {
    specificationVersion: "v4",
    provider: DEMO_PROVIDER,
    modelId: DEMO_MODEL_ID,
    supportedUrls: {},

    async doGenerate(call) {
      call.abortSignal?.throwIfAborted();
      const turn = runTurn(call, estimator);
      return {
        content: [turn.output],
        finishReason: turn.finishReason,
        usage: usageOf(turn),
        response: { id: turn.responseId, modelId: DEMO_MODEL_ID, timestamp: new Date() },
        warnings: [],
      };
    },

    async doStream(call) {
      call.abortSignal?.throwIfAborted();
      const turn = runTurn(call, estimator);
      return { stream: streamTurn(turn, chunkDelayMs, call.abortSignal) };
    },
  };
}

/** Counts the prompt, refuses it if it cannot fit, and calls a tool or writes the reply (or summary). */
function runTurn(call: LanguageModelV4CallOptions, estimator: TokenEstimator): DemoTurn {
  const messages = unitsFromProviderPrompt(call.prompt);
  const inputTokens = estimator.estimate([...messages, toolDefinitions(call)]);
  if (inputTokens > DEMO_CONTEXT_WINDOW) throw contextLengthExceeded(inputTokens, call.prompt);

  const seed = hashMessages(messages);
  const responseId = `demo-${seed.toString(36)}`;
  // Like a real model, the output stops where the window (or the caller's ceiling) runs out.
  const ceiling = Math.min(
    call.maxOutputTokens ?? DEMO_MAX_OUTPUT_TOKENS,
    DEMO_CONTEXT_WINDOW - inputTokens,
  );

  const summarizing = isSummarizerCall(call.prompt);
  const planned = summarizing ? undefined : planToolCall(call);
  if (planned) {
    const input = JSON.stringify(planned.input);
    const outputTokens = estimator.countText(input);
    // A call cut short would be invalid JSON; one that cannot fit is not made at all.
    if (outputTokens <= ceiling)
      return {
        output: {
          type: "tool-call",
          // Derived from the prompt, so the same conversation gets the same call id.
          toolCallId: `call_demo_${seed.toString(36)}`,
          toolName: planned.toolName,
          input,
        },
        inputTokens,
        outputTokens,
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        responseId,
      };
  }

  // A summary is composed to fit the ceiling; only its bare headings could ever be cut.
  const full = summarizing
    ? composeSummary(call.prompt, ceiling, (text) => estimator.countText(text))
    : composeReply(call.prompt, seed);
  const text = truncateToTokens(full, ceiling, estimator);
  const cut = text.length < full.length;
  return {
    output: { type: "text", text },
    inputTokens,
    outputTokens: estimator.countText(text),
    finishReason: cut ? { unified: "length", raw: "length" } : { unified: "stop", raw: "stop" },
    responseId,
  };
}

/** Tool schemas are part of a real prompt too, whether or not the model calls one. */
function toolDefinitions(call: LanguageModelV4CallOptions): CountMessage {
  const tools = (call.tools ?? []).map((tool) =>
    tool.type === "function"
      ? { name: tool.name, description: tool.description, parameters: tool.inputSchema }
      : { name: tool.name, id: tool.id },
  );
  const text = tools.length > 0 ? JSON.stringify(tools) : "";
  return { key: "demo:tools", units: text ? [{ type: "text", text }] : [], wireMessages: 0 };
}

function contextLengthExceeded(inputTokens: number, prompt: LanguageModelV4Prompt): APICallError {
  const message =
    `This model's maximum context length is ${DEMO_CONTEXT_WINDOW} tokens. However, your ` +
    `messages resulted in ${inputTokens} tokens. Please reduce the length of the messages.`;
  const body = {
    error: {
      message,
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    },
  };
  return new APICallError({
    message,
    url: DEMO_URL,
    requestBodyValues: { model: DEMO_MODEL_ID, messages: prompt.length },
    statusCode: 400,
    responseBody: JSON.stringify(body),
    data: body,
    isRetryable: false,
  });
}

function usageOf(turn: DemoTurn): LanguageModelV4Usage {
  return {
    inputTokens: {
      total: turn.inputTokens,
      noCache: turn.inputTokens,
      cacheRead: 0,
      cacheWrite: 0,
    },
    outputTokens: { total: turn.outputTokens, text: turn.outputTokens, reasoning: 0 },
  };
}

function streamTurn(
  turn: DemoTurn,
  chunkDelayMs: number,
  abortSignal: AbortSignal | undefined,
): ReadableStream<LanguageModelV4StreamPart> {
  const parts: LanguageModelV4StreamPart[] = [
    { type: "stream-start", warnings: [] },
    {
      type: "response-metadata",
      id: turn.responseId,
      modelId: DEMO_MODEL_ID,
      timestamp: new Date(),
    },
    ...outputParts(turn.output),
    { type: "finish", finishReason: turn.finishReason, usage: usageOf(turn) },
  ];
  let index = 0;
  const cancelled = new AbortController(); // fires when the reader goes away
  const signal = abortSignal ? AbortSignal.any([abortSignal, cancelled.signal]) : cancelled.signal;

  return new ReadableStream<LanguageModelV4StreamPart>({
    async pull(controller) {
      const part = parts[index++];
      if (!part) {
        controller.close();
        return;
      }
      try {
        if ((part.type === "text-delta" || part.type === "tool-input-delta") && chunkDelayMs > 0)
          await delay(chunkDelayMs, { abortSignal: signal });
        signal.throwIfAborted();
      } catch (error) {
        if (!cancelled.signal.aborted) controller.error(signal.aborted ? signal.reason : error);
        return;
      }
      controller.enqueue(part);
    },
    cancel() {
      cancelled.abort();
    },
  });
}

/** Text as a block of few-word deltas; a tool call as its input, then the call itself. */
function outputParts(output: DemoTurn["output"]): LanguageModelV4StreamPart[] {
  if (output.type === "tool-call") {
    const id = output.toolCallId;
    return [
      { type: "tool-input-start", id, toolName: output.toolName },
      { type: "tool-input-delta", id, delta: output.input },
      { type: "tool-input-end", id },
      output,
    ];
  }
  const id = "text-0";
  return [
    { type: "text-start", id },
    ...wordGroups(output.text).map(
      (delta): LanguageModelV4StreamPart => ({ type: "text-delta", id, delta }),
    ),
    { type: "text-end", id },
  ];
}

/** Split text into deltas of a few words, keeping every character. */
function wordGroups(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? [];
  const groups: string[] = [];
  for (let i = 0; i < words.length; i += WORDS_PER_CHUNK) {
    groups.push(words.slice(i, i + WORDS_PER_CHUNK).join(""));
  }
  return groups;
}

/** The longest word-prefix of `text` that fits in `maxTokens`. */
function truncateToTokens(text: string, maxTokens: number, estimator: TokenEstimator): string {
  if (maxTokens <= 0) return "";
  if (estimator.countText(text) <= maxTokens) return text;
  const words = text.match(/\s*\S+/g) ?? [];
  let low = 0;
  let high = words.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (estimator.countText(words.slice(0, mid).join("")) <= maxTokens) low = mid;
    else high = mid - 1;
  }
  return words.slice(0, low).join("");
}

/** FNV-1a over the prompt's units: varies the reply deterministically, never reads file bytes. */
function hashMessages(messages: readonly CountMessage[]): number {
  const json = JSON.stringify(messages.map((m) => m.units));
  let hash = 0x811c9dc5;
  for (let i = 0; i < json.length; i++) {
    hash ^= json.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
