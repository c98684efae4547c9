import type { ModelMessage, ToolResultPart } from "ai";
import {
  type Calibration,
  calibrationSample,
  effectiveRatio,
  nextCalibration,
} from "@/lib/context/calibration";
import { createEstimator } from "@/lib/context/tokens";
import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import type { BenchContext, Benchmark, Figures } from "./benchmark";
import { CORPUS, type Conversation } from "./corpus";

/**
 * `estimator`: how close Fold's token estimate comes to a provider's real prompt count, next
 * to the chars ÷ 4 and chars ÷ 3.5 rules of thumb. (What a turn's path costs an unchanged
 * chat as its history grows is the `turn` benchmark, turn.ts.)
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
    return figures;
  },
};
