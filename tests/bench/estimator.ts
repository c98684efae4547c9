import type { ModelMessage, ToolResultPart } from "ai";
import type { MessageStats } from "@/lib/chat/stats";
import { type FoldUIMessage, rowToUIMessage } from "@/lib/chat/ui-message";
import {
  type Calibration,
  calibrationSample,
  effectiveRatio,
  nextCalibration,
} from "@/lib/context/calibration";
import { createEstimator, type TokenEstimator } from "@/lib/context/tokens";
import { projectContext } from "@/lib/context/usage";
import type { Message } from "@/lib/db/schema";
import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import type { BenchContext, Benchmark, Figures } from "./benchmark";
import { CORPUS, type Conversation } from "./corpus";

/**
 * `estimator`: how close Fold's token estimate comes to a provider's real prompt count, next
 * to the chars ÷ 4 and chars ÷ 3.5 rules of thumb; and what projecting an unchanged chat's
 * context costs as its history grows (DESIGN §5).
 *
 * Accuracy: every corpus conversation goes to the fake OpenAI-compatible server in the wire
 * format (assistant `tool_calls`, `tool` messages), whose `usage.prompt_tokens` is the truth.
 * Run once with `tokenScale` 1 (a provider whose tokenizer is o200k) and once with 1.12
 * (one that counts 12 % more); the 1.12 run gives the headline figures.
 */

const MODEL = "bench-model";
/** A provider that counts 12 % more tokens than o200k: the headline run. */
const HEADLINE_SCALE = 1.12;
const SCALES = [HEADLINE_SCALE, 1] as const;
/** The calibrated error counts from this conversation on (1-based), after 5 samples of learning. */
const CALIBRATED_FROM = 6;
const PROJECTION_SIZES = [100, 1_000, 10_000] as const;
/** Measured calls of the O(1) path, split in batches; the median batch mean is reported. */
const PROJECTION_ITERATIONS = 2_000;
const BATCHES = 5;
/** Untimed calls per chat before any projection is timed. */
const JIT_WARMUP_CALLS = 20_000;
/** A history grows linearly past this ratio of the 10,000- to the 100-message time. */
const GROWTH_LIMIT = 3;

// ---------------------------------------------------------------------------
// OpenAI wire format (mirrors @ai-sdk/openai-compatible's message conversion).
// ---------------------------------------------------------------------------

type WireToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
type WireMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: WireToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

function toolOutputText(output: ToolResultPart["output"]): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    default:
      throw new Error(`corpus tool output of type ${output.type} is not supported`);
  }
}

function toWire(messages: readonly ModelMessage[]): WireMessage[] {
  const wire: WireMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
        wire.push({ role: "system", content: message.content });
        break;
      case "user":
        if (typeof message.content !== "string") throw new Error("corpus user messages are text");
        wire.push({ role: "user", content: message.content });
        break;
      case "assistant": {
        if (typeof message.content === "string") {
          wire.push({ role: "assistant", content: message.content });
          break;
        }
        let text = "";
        const toolCalls: WireToolCall[] = [];
        for (const part of message.content) {
          if (part.type === "text") text += part.text;
          else if (part.type === "tool-call") {
            toolCalls.push({
              id: part.toolCallId,
              type: "function",
              function: { name: part.toolName, arguments: JSON.stringify(part.input) },
            });
          }
        }
        wire.push(
          toolCalls.length > 0
            ? { role: "assistant", content: text || null, tool_calls: toolCalls }
            : { role: "assistant", content: text },
        );
        break;
      }
      case "tool":
        for (const part of message.content) {
          if (part.type !== "tool-result") continue;
          wire.push({
            role: "tool",
            tool_call_id: part.toolCallId,
            content: toolOutputText(part.output),
          });
        }
        break;
    }
  }
  return wire;
}

/** Characters of everything the messages carry: text, tool names, arguments and results (UTF-16 units). */
function charsOf(wire: readonly WireMessage[]): number {
  let chars = 0;
  for (const message of wire) {
    chars += message.content?.length ?? 0;
    if (message.role === "assistant") {
      for (const call of message.tool_calls ?? []) {
        chars += call.function.name.length + call.function.arguments.length;
      }
    }
  }
  return chars;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function realPromptTokens(url: string, messages: readonly WireMessage[]): Promise<number> {
  const response = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, messages, stream: false, max_tokens: 16 }),
  });
  const body: unknown = await response.json();
  if (!response.ok)
    throw new Error(`fake server answered ${response.status}: ${JSON.stringify(body)}`);
  const usage = isRecord(body) ? body.usage : undefined;
  const tokens = isRecord(usage) ? usage.prompt_tokens : undefined;
  if (typeof tokens !== "number")
    throw new Error(`no usage.prompt_tokens in ${JSON.stringify(body)}`);
  return tokens;
}

// ---------------------------------------------------------------------------
// Accuracy.
// ---------------------------------------------------------------------------

type Sample = {
  conversation: Conversation;
  real: number;
  raw: number;
  cold: number;
  calibrated: number;
  /** The ratio the calibrated estimate used (learned from the conversations before it). */
  ratio: number;
  chars: number;
};

type Errors = { mean: number; max: number; signedMean: number; worst: string };

const errPct = (estimate: number, real: number) => (Math.abs(estimate - real) / real) * 100;
const signedPct = (estimate: number, real: number) => ((estimate - real) / real) * 100;
const round2 = (value: number) => Math.round(value * 100) / 100;

function errors(samples: readonly Sample[], estimate: (s: Sample) => number): Errors {
  let sum = 0;
  let signed = 0;
  let max = -1;
  let worst = "";
  for (const s of samples) {
    const err = errPct(estimate(s), s.real);
    sum += err;
    signed += signedPct(estimate(s), s.real);
    if (err > max) {
      max = err;
      worst = s.conversation.name;
    }
  }
  return { mean: sum / samples.length, max, signedMean: signed / samples.length, worst };
}

async function measureAccuracy(tokenScale: number): Promise<Sample[]> {
  const fake = await startFakeOpenAI({
    models: [{ id: MODEL, maxModelLen: 10_000_000 }],
    enforceContextWindow: false,
    tokenScale,
  });
  try {
    const estimator = createEstimator();
    const coldRatio = effectiveRatio(null);
    let calibration: Calibration | null = null;
    const samples: Sample[] = [];
    for (const conversation of CORPUS) {
      const wire = toWire(conversation.messages);
      const real = await realPromptTokens(fake.url, wire);
      const recorded = fake.requests.at(-1)?.promptTokens;
      if (recorded !== real) throw new Error(`usage ${real} ≠ recorded ${recorded}`);
      // Estimate first, learn after: the calibrated estimate never sees its own answer.
      const raw = estimator.estimateModelMessages(conversation.messages);
      const ratio = effectiveRatio(calibration);
      samples.push({
        conversation,
        real,
        raw,
        cold: estimator.estimateModelMessages(conversation.messages, { ratio: coldRatio }),
        calibrated: estimator.estimateModelMessages(conversation.messages, { ratio }),
        ratio,
        chars: charsOf(wire),
      });
      const sample = calibrationSample(real, raw);
      if (sample !== null) calibration = nextCalibration(calibration, sample);
    }
    return samples;
  } finally {
    await fake.close();
  }
}

function accuracyFigures(samples: readonly Sample[], tokenScale: number, context: BenchContext) {
  const suffix = tokenScale === HEADLINE_SCALE ? "" : `_scale${tokenScale}`;
  const calibratedSamples = samples.slice(CALIBRATED_FROM - 1);
  const cold = errors(samples, (s) => s.cold);
  const calibrated = errors(calibratedSamples, (s) => s.calibrated);
  const raw = errors(samples, (s) => s.raw);
  const chars4 = errors(samples, (s) => Math.ceil(s.chars / 4));
  const chars35 = errors(samples, (s) => Math.ceil(s.chars / 3.5));
  const name = (what: string) => `estimator.${what}${suffix}`;
  const figures: Figures = {
    [name("cold_mean_err_pct")]: round2(cold.mean),
    [name("cold_max_err_pct")]: round2(cold.max),
    [name("calibrated_mean_err_pct")]: round2(calibrated.mean),
    [name("calibrated_max_err_pct")]: round2(calibrated.max),
    [name("chars4_mean_err_pct")]: round2(chars4.mean),
    [name("chars4_max_err_pct")]: round2(chars4.max),
    [name("chars35_mean_err_pct")]: round2(chars35.mean),
    [name("chars35_max_err_pct")]: round2(chars35.max),
    [name("raw_mean_err_pct")]: round2(raw.mean),
  };
  const bias = (e: Errors) => `signed ${e.signedMean >= 0 ? "+" : ""}${e.signedMean.toFixed(1)} %`;
  const run = `provider tokenScale ${tokenScale}, ${samples.length} conversations`;
  context.note(
    name("cold_mean_err_pct"),
    `raw × ${effectiveRatio(null)} (no samples); ${bias(cold)}; ${run}`,
  );
  context.note(name("cold_max_err_pct"), `worst: ${cold.worst}`);
  context.note(
    name("calibrated_mean_err_pct"),
    `online EMA, estimate before learning; conversations ${CALIBRATED_FROM}–${samples.length}; ${bias(calibrated)}`,
  );
  context.note(name("calibrated_max_err_pct"), `worst: ${calibrated.worst}`);
  context.note(
    name("chars4_mean_err_pct"),
    `ceil(chars / 4), chars incl. tool JSON; ${bias(chars4)}`,
  );
  context.note(name("chars4_max_err_pct"), `worst: ${chars4.worst}`);
  context.note(name("chars35_mean_err_pct"), `ceil(chars / 3.5); ${bias(chars35)}`);
  context.note(name("chars35_max_err_pct"), `worst: ${chars35.worst}`);
  context.note(name("raw_mean_err_pct"), `o200k estimate, no ratio; ${bias(raw)}`);
  return figures;
}

/** Per-category detail (mean absolute % error), printed beside the harness table. */
function printDetail(samples: readonly Sample[], tokenScale: number): void {
  const categories = [...new Set(samples.map((s) => s.conversation.category))];
  const header = [
    "category",
    "n",
    "raw",
    "cold",
    "calibrated*",
    "chars/4",
    "chars/3.5",
    "raw signed",
  ];
  const lines = [header];
  const fmt = (value: number) => value.toFixed(1);
  for (const category of [...categories, "all"]) {
    const group = samples.filter((s) => category === "all" || s.conversation.category === category);
    const late = group.filter((s) => samples.indexOf(s) >= CALIBRATED_FROM - 1);
    lines.push([
      category,
      String(group.length),
      fmt(errors(group, (s) => s.raw).mean),
      fmt(errors(group, (s) => s.cold).mean),
      late.length > 0 ? fmt(errors(late, (s) => s.calibrated).mean) : "—",
      fmt(errors(group, (s) => Math.ceil(s.chars / 4)).mean),
      fmt(errors(group, (s) => Math.ceil(s.chars / 3.5)).mean),
      fmt(errors(group, (s) => s.raw).signedMean),
    ]);
  }
  const widths = header.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? "").length)));
  console.log(`\nestimator: mean |error| % by category, provider tokenScale ${tokenScale}`);
  console.log("  (* calibrated counts conversations 6 on; raw signed < 0 means under-estimate)");
  for (const line of lines) {
    console.log(
      `  ${line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  ")}`,
    );
  }
}

function printPerConversation(samples: readonly Sample[], tokenScale: number): void {
  console.log(`\nestimator: per conversation, provider tokenScale ${tokenScale} (in corpus order)`);
  console.log("  #   conversation                 real    raw   cold  calib  ratio  chars/4");
  samples.forEach((s, i) => {
    const cells = [
      String(i + 1).padStart(2),
      s.conversation.name.padEnd(26),
      String(s.real).padStart(7),
      String(s.raw).padStart(6),
      String(s.cold).padStart(6),
      String(s.calibrated).padStart(6),
      s.ratio.toFixed(3).padStart(6),
      String(Math.ceil(s.chars / 4)).padStart(8),
    ];
    console.log(`  ${cells.join(" ")}`);
  });
}

// ---------------------------------------------------------------------------
// Projection cost.
// ---------------------------------------------------------------------------

const PROJECTION_MODEL = `fake:${MODEL}`;

/** Texts to fill a long chat with, taken from the corpus. */
function corpusTexts(): { user: string[]; assistant: string[] } {
  const user: string[] = [];
  const assistant: string[] = [];
  for (const conversation of CORPUS) {
    for (const message of conversation.messages) {
      if (message.role === "user" && typeof message.content === "string") {
        if (message.content.length < 2_000) user.push(message.content);
      } else if (message.role === "assistant" && typeof message.content !== "string") {
        const text = message.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
        if (text) assistant.push(text);
      }
    }
  }
  return { user, assistant };
}

function statsFor(contextTokens: number, outputTokens: number, at: number): MessageStats {
  return {
    model: PROJECTION_MODEL,
    inputTokens: contextTokens,
    outputTokens,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    contextTokens,
    lastStepOutputTokens: outputTokens,
    steps: 1,
    startedAt: at,
    firstTokenAt: at + 300,
    finishedAt: at + 2_000,
    finishReason: "stop",
  };
}

/** An unchanged chat of `count` messages: user/assistant alternating, every reply with stats. */
function buildChat(count: number): FoldUIMessage[] {
  const texts = corpusTexts();
  const messages: FoldUIMessage[] = [];
  let context = 0;
  for (let i = 0; i < count; i++) {
    const turn = Math.floor(i / 2);
    if (i % 2 === 0) {
      const text = texts.user[turn % texts.user.length] ?? "";
      context += Math.ceil(text.length / 4) + 4;
      messages.push({ id: `msg-${i}`, role: "user", parts: [{ type: "text", text }] });
      continue;
    }
    const text = texts.assistant[turn % texts.assistant.length] ?? "";
    const output = Math.ceil(text.length / 4);
    const parts: FoldUIMessage["parts"] = [{ type: "step-start" }];
    if (turn % 10 === 0) {
      // Every tenth reply used a tool first: one more step, with a JSON result.
      parts.push(
        {
          type: "dynamic-tool",
          toolName: "web_search",
          toolCallId: `call-${i}`,
          state: "output-available",
          input: { query: `turn ${turn}`, max_results: 3 },
          output: { results: [{ title: `Result ${turn}`, url: `https://example.com/${turn}` }] },
        },
        { type: "step-start" },
      );
    }
    parts.push({ type: "text", text });
    messages.push({
      id: `msg-${i}`,
      role: "assistant",
      parts,
      metadata: { stats: statsFor(context, output, 1_750_000_000_000 + i * 60_000) },
    });
    context += output + 4;
  }
  return messages;
}

/** Microseconds per call: a warm-up, then `iterations` calls in batches; the median batch mean. */
function timeUs(iterations: number, call: () => number): number {
  let sink = 0;
  for (let i = 0; i < Math.max(1, iterations / 4); i++) sink += call();
  const perBatch = Math.max(1, Math.round(iterations / BATCHES));
  const means: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < perBatch; i++) sink += call();
    means.push(Number(process.hrtime.bigint() - start) / 1_000 / perBatch);
  }
  if (!Number.isFinite(sink))
    throw new Error("unreachable: keeps the calls from being optimized away");
  means.sort((a, b) => a - b);
  return means[Math.floor(means.length / 2)] ?? Number.NaN;
}

function project(messages: readonly FoldUIMessage[], modelId: string, estimator: TokenEstimator) {
  return projectContext({ messages, modelId, overheadTokens: 1_200, ratio: 1.1, estimator })
    .projectedTokens;
}

function toRows(messages: readonly FoldUIMessage[]): Message[] {
  return messages.map((m, seq) => ({
    id: m.id,
    chatId: "00000000-0000-4000-8000-000000000000",
    seq,
    role: m.role,
    parts: m.parts,
    metadata: m.metadata ?? null,
    createdAt: new Date(1_750_000_000_000 + seq * 1_000),
  }));
}

function projectionFigures(context: BenchContext): Figures {
  const figures: Figures = {};
  const chats = PROJECTION_SIZES.map((size) => {
    const messages = buildChat(size);
    return { size, messages, rows: toRows(messages), estimator: createEstimator() };
  });
  // Warm each chat's estimator once, and the JIT on every size before any is timed, so the
  // first size measured does not pay for compilation.
  for (const chat of chats) {
    const first = projectContext({
      messages: chat.messages,
      modelId: PROJECTION_MODEL,
      overheadTokens: 0,
      ratio: 1,
      estimator: chat.estimator,
    });
    if (first.method !== "real") throw new Error("the projection did not use the real count");
    for (let i = 0; i < JIT_WARMUP_CALLS; i++)
      project(chat.messages, PROJECTION_MODEL, chat.estimator);
  }
  // The O(1) path: the last reply is this model's, so only what follows it is estimated.
  const real: number[] = [];
  for (const chat of chats) {
    const us = timeUs(PROJECTION_ITERATIONS, () =>
      project(chat.messages, PROJECTION_MODEL, chat.estimator),
    );
    real.push(us);
    figures[`projection.us_${chat.size}`] = round2(us);
  }
  for (const chat of chats) {
    // The estimate path: another model answered last, so the whole history is estimated (memoized).
    const slowIterations = Math.max(BATCHES * 2, Math.round(200_000 / chat.size));
    figures[`projection.model_switch_us_${chat.size}`] = round2(
      timeUs(slowIterations, () => project(chat.messages, "other:model", chat.estimator)),
    );
    // What GET /api/chats/:id/context does before projecting: every stored row → UIMessage.
    figures[`projection.rows_to_ui_us_${chat.size}`] = round2(
      timeUs(slowIterations, () => chat.rows.map(rowToUIMessage).length),
    );
  }
  const growth = (real.at(-1) ?? 0) / (real[0] ?? 1);
  context.note(
    "projection.us_100",
    `µs per projectContext call, unchanged chat, memo warm; ${PROJECTION_ITERATIONS} calls, median of ${BATCHES} batches`,
  );
  context.note("projection.us_1000", "µs per call");
  context.note(
    "projection.us_10000",
    growth > GROWTH_LIMIT
      ? `µs per call — GROWS with history: ${growth.toFixed(1)}× the 100-message time`
      : `µs per call — flat: ${growth.toFixed(2)}× the 100-message time`,
  );
  for (const size of PROJECTION_SIZES) {
    context.note(
      `projection.model_switch_us_${size}`,
      "µs per call; last reply from another model → whole history estimated (memo warm)",
    );
    context.note(
      `projection.rows_to_ui_us_${size}`,
      "µs per rows.map(rowToUIMessage), the caller's load step (chatContext)",
    );
  }
  return figures;
}

export const benchmark: Benchmark = {
  name: "estimator",
  async run(context) {
    const figures: Figures = {};
    for (const scale of SCALES) {
      const samples = await measureAccuracy(scale);
      Object.assign(figures, accuracyFigures(samples, scale, context));
      printDetail(samples, scale);
      if (scale === HEADLINE_SCALE) printPerConversation(samples, scale);
    }
    figures["estimator.conversations"] = CORPUS.length;
    context.note("estimator.conversations", "corpus size (tests/bench/corpus)");
    Object.assign(figures, projectionFigures(context));
    return figures;
  },
};
