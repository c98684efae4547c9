/**
 * The offline demo model (DESIGN §13): a real LanguageModelV4 that needs no key
 * and no network. It answers from the conversation it is given, reports honest
 * usage counted with the one estimator, and rejects an over-long prompt the way
 * a real provider does, so compaction and recovery can be seen working.
 */
import {
  APICallError,
  type LanguageModelV4,
  type LanguageModelV4CallOptions,
  type LanguageModelV4FinishReason,
  type LanguageModelV4Prompt,
  type LanguageModelV4StreamPart,
  type LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { delay } from "@ai-sdk/provider-utils";
import {
  type CountMessage,
  defaultEstimator,
  type TokenEstimator,
  unitsFromProviderPrompt,
} from "@/lib/context/tokens";

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
  text: string;
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
        content: [{ type: "text", text: turn.text }],
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

/** Counts the prompt, refuses it if it cannot fit, and writes the reply. */
function runTurn(call: LanguageModelV4CallOptions, estimator: TokenEstimator): DemoTurn {
  const messages = unitsFromProviderPrompt(call.prompt);
  const inputTokens = estimator.estimate([...messages, toolDefinitions(call)]);
  if (inputTokens > DEMO_CONTEXT_WINDOW) throw contextLengthExceeded(inputTokens, call.prompt);

  const seed = hashMessages(messages);
  const full = composeReply(call.prompt, seed);
  // Like a real model, the reply stops where the window (or the caller's ceiling) runs out.
  const ceiling = Math.min(
    call.maxOutputTokens ?? DEMO_MAX_OUTPUT_TOKENS,
    DEMO_CONTEXT_WINDOW - inputTokens,
  );
  const text = truncateToTokens(full, ceiling, estimator);
  const cut = text.length < full.length;
  return {
    text,
    inputTokens,
    outputTokens: estimator.countText(text),
    finishReason: cut ? { unified: "length", raw: "length" } : { unified: "stop", raw: "stop" },
    responseId: `demo-${seed.toString(36)}`,
  };
}

/** Tool schemas are part of a real prompt too; the demo model never calls them. */
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
  const textId = "text-0";
  const parts: LanguageModelV4StreamPart[] = [
    { type: "stream-start", warnings: [] },
    {
      type: "response-metadata",
      id: turn.responseId,
      modelId: DEMO_MODEL_ID,
      timestamp: new Date(),
    },
    { type: "text-start", id: textId },
    ...wordGroups(turn.text).map(
      (delta): LanguageModelV4StreamPart => ({ type: "text-delta", id: textId, delta }),
    ),
    { type: "text-end", id: textId },
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
        if (part.type === "text-delta" && chunkDelayMs > 0)
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

// ---------------------------------------------------------------------------
// The reply: deterministic markdown that shows what the model can see.
// ---------------------------------------------------------------------------

/** How a Fold summary is introduced in the prompt (DESIGN §8.1). */
const SUMMARY_OPEN_TAG = "<conversation-summary>";
const SUMMARY_CLOSE_TAG = "</conversation-summary>";
/** Quotes stay short so the reply stays readable whatever the user pasted. */
const QUOTE_MAX_WORDS = 12;
const QUOTE_MAX_CHARS = 90;
/** Longer "words" are pasted data (hashes, base64), not topics. */
const KEYWORD_MAX_CHARS = 24;
const KEYWORD_MIN_CHARS = 5;
const FALLBACK_KEYWORDS = ["your question", "the details", "the next step"];
const STOPWORDS = new Set(
  "about above after again being below could doing every first from have just maybe might more most other please really should since some still than thank thanks that their them then there these they thing think this those through under until very want what when where which while with would your yours".split(
    " ",
  ),
);

const OPENERS = [
  "Happy to help with that.",
  "Good question — let me work through it.",
  "Thanks for the message.",
  "Let's take a look.",
];
const INTROS = [
  "Here is how I would approach it:",
  "A few things stand out:",
  "My suggestion, in three steps:",
];
const ANGLES: Array<(k: string[]) => string[]> = [
  (k) => [
    `Start with **${k[0]}**: pin down what you already know and what is still open.`,
    `Then look at **${k[1]}** — small, concrete steps make progress easy to check.`,
    `Finally, tie it back to **${k[2]}** so the pieces fit together.`,
  ],
  (k) => [
    `**${k[0]}** is the heart of it, so I would begin there.`,
    `**${k[1]}** deserves a quick sanity check before going further.`,
    `**${k[2]}** is worth writing down now, so nothing gets lost later.`,
  ],
  (k) => [
    `Say the goal around **${k[0]}** in one sentence.`,
    `List the constraints that touch **${k[1]}**.`,
    `Pick one next step for **${k[2]}** and do just that.`,
  ],
];
const CLOSERS = [
  "_I am the offline demo model: my replies are templates, but the context handling around them is real._",
  "_Demo model (offline) — pick a real model for real answers; compaction works the same way._",
  "_This reply comes from the built-in demo model, so no API key was needed._",
];

type UserTurn = { text: string; isSummary: boolean };

/** A 60–200 word markdown reply that quotes, counts and recalls the conversation. */
function composeReply(prompt: LanguageModelV4Prompt, seed: number): string {
  const userTurns: UserTurn[] = prompt.flatMap((message) => {
    if (message.role === "system") {
      return message.content.includes(SUMMARY_OPEN_TAG)
        ? [{ text: message.content, isSummary: true }]
        : [];
    }
    if (message.role !== "user") return [];
    const text = message.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(" ");
    return [{ text, isSummary: text.includes(SUMMARY_OPEN_TAG) }];
  });
  const turns = userTurns.filter((t) => !t.isSummary && t.text.trim());
  const summary = userTurns.find((t) => t.isSummary);
  const latest = turns.at(-1);
  const earlier = turns.length > 1 ? turns[0] : undefined;
  const pick = <T>(items: readonly T[], salt: number): T =>
    items[(seed + salt) % items.length] as T;

  const context: string[] = [];
  if (summary) {
    const recent =
      turns.length <= 1 ? "your latest message" : `the ${turns.length} most recent turns`;
    context.push(`I am working from a summary of earlier turns, plus ${recent} in full.`);
  } else if (turns.length <= 1) context.push("This is the first turn of our conversation.");
  else context.push(`This is turn ${turns.length} of our conversation.`);
  if (earlier)
    context.push(`Earlier you said “${quote(earlier.text)}”, and I am keeping that in mind.`);
  else if (summary) {
    const remembered = summaryLine(summary.text);
    if (remembered) context.push(`From that summary I remember: “${quote(remembered)}”.`);
  }

  const bullets = pick(ANGLES, 2)(topicWords(latest?.text ?? "")).map((line) => `- ${line}`);
  return [
    latest
      ? `${pick(OPENERS, 0)} You wrote: “${quote(latest.text)}”`
      : `${pick(OPENERS, 0)} I do not see a question yet.`,
    pick(INTROS, 1),
    bullets.join("\n"),
    context.join(" "),
    pick(CLOSERS, 3),
  ].join("\n\n");
}

/** The opening words of a message on one line, with "…" when cut. */
function quote(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  let short = line.split(" ").slice(0, QUOTE_MAX_WORDS).join(" ");
  if (short.length > QUOTE_MAX_CHARS) short = short.slice(0, QUOTE_MAX_CHARS).trimEnd();
  return short.length < line.length ? `${short}…` : short;
}

/** Up to three distinct topic words of the message, padded with generic ones. */
function topicWords(text: string): string[] {
  const found: string[] = [];
  for (const raw of text.toLowerCase().split(/[^\p{L}\p{N}_-]+/u)) {
    const word = raw.replace(/^[-_]+|[-_]+$/g, "");
    if (word.length < KEYWORD_MIN_CHARS || word.length > KEYWORD_MAX_CHARS) continue;
    if (STOPWORDS.has(word) || found.includes(word)) continue;
    found.push(word);
    if (found.length === 3) break;
  }
  for (const fallback of FALLBACK_KEYWORDS) if (found.length < 3) found.push(fallback);
  return found;
}

/** The first substantive line of a summary: what a user would recognize from before. */
function summaryLine(text: string): string | undefined {
  const start = text.indexOf(SUMMARY_OPEN_TAG);
  const end = text.indexOf(SUMMARY_CLOSE_TAG);
  const body = text.slice(start + SUMMARY_OPEN_TAG.length, end < 0 ? undefined : end);
  return body
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => line.replace(/^([-*+]|\d+[.)])\s+/, ""))
    .find((line) => line.split(/\s+/).length >= 3);
}
