import type { ModelMessage } from "ai";
import { chatRequestFrame, type RequestFrame } from "@/lib/ai/request-frame";
import {
  type Calibration,
  calibrationSample,
  classRatios,
  nextCalibration,
} from "@/lib/context/calibration";
import {
  addClassTokens,
  type ClassTokens,
  classTotal,
  FIT_MEASURES,
} from "@/lib/context/content-class";
import { estimateOverhead } from "@/lib/context/overhead";
import { applyRatio, createEstimator, type TokenEstimator } from "@/lib/context/tokens";
import type { TokenizerFamily } from "../fixtures/fake-openai/server";
import { startFakeOpenAI, TOKENIZER_FAMILIES } from "../fixtures/fake-openai/server";
import type { BenchContext, Benchmark, Figures } from "./benchmark";
import type { Conversation } from "./corpus";
import { mixedConversations } from "./estimator-mixed";
import {
  charsOf,
  realPromptTokens,
  toWire,
  toWireTools,
  type WireMessage,
  type WireTool,
} from "./estimator-wire";

/**
 * `estimator`: how close Fold's token estimate comes to real tokenizers of other model
 * families, cold and once calibrated. (What a turn's path costs an unchanged chat as its
 * history grows is the `turn` benchmark, turn.ts.)
 *
 * Accuracy: a mixed set — the corpus (agent conversations with code and JSON tool output)
 * woven with generated CJK and digit-heavy conversations (estimator-mixed.ts, fixed seed) —
 * goes, one conversation per turn, to the fake OpenAI-compatible server in the wire format.
 * The server counts each prompt with the family's real tokenizer and chat framing
 * (`usage.prompt_tokens`, the truth). Fold's side is the product's own path: the estimator's
 * raw count by content class, times the model's calibration (cold priors at first), which
 * then learns from the real count — estimate first, learn after, as a turn does.
 */

/** The day the framed requests' instructions name (they carry the date): fixed, so runs compare. */
const FRAME_DAY = new Date("2026-06-15T12:00:00Z");

/** The calibrated error counts from this turn on (1-based): after 5 turns of learning. */
const CALIBRATED_FROM = 6;

type Sample = {
  conversation: Conversation;
  real: number;
  raw: number;
  cold: number;
  calibrated: number;
  chars: number;
};

type Errors = {
  mean: number;
  max: number;
  maxUnder: number;
  signedMean: number;
  worst: string;
  worstUnder: string;
};

const signedPct = (estimate: number, real: number) => ((estimate - real) / real) * 100;
const round2 = (value: number) => Math.round(value * 100) / 100;

function errors(samples: readonly Sample[], estimate: (s: Sample) => number): Errors {
  let sum = 0;
  let signed = 0;
  let max = -1;
  let maxUnder = 0;
  let worst = "";
  let worstUnder = "none";
  for (const s of samples) {
    const pct = signedPct(estimate(s), s.real);
    sum += Math.abs(pct);
    signed += pct;
    if (-pct > maxUnder) {
      maxUnder = -pct;
      worstUnder = s.conversation.name;
    }
    if (Math.abs(pct) > max) {
      max = Math.abs(pct);
      worst = s.conversation.name;
    }
  }
  const n = samples.length;
  return { mean: sum / n, max, maxUnder, signedMean: signed / n, worst, worstUnder };
}

/**
 * Fold's raw estimate of the request by class, the way a turn makes it (`requestEstimate` in
 * lib/turn/answer.ts): the instructions and tools through `estimateOverhead`, which adds the
 * per-request framing, plus the messages; and the raw tokens of that frame.
 */
export async function requestRawClasses(
  estimator: TokenEstimator,
  messages: readonly ModelMessage[],
): Promise<{ raw: ClassTokens; frameTokens: number }> {
  const instructions = messages.flatMap((m) => (m.role === "system" ? [m.content] : [])).join("\n");
  const { overheadClasses, overheadTokens } = await estimateOverhead(estimator, instructions, {});
  const raw = estimator.classTokensOfModelMessages(messages.filter((m) => m.role !== "system"));
  addClassTokens(raw, overheadClasses);
  return { raw, frameTokens: overheadTokens };
}

/**
 * What a Fold turn sends around the messages: its instructions (on a fixed day) and its
 * built-in tools, in the wire format, and Fold's own raw estimate of them (the turn's frame).
 */
export type FoldFrame = { frame: RequestFrame; wireTools: WireTool[] };

export async function foldFrame(): Promise<FoldFrame> {
  const frame = await chatRequestFrame(FRAME_DAY);
  return { frame, wireTools: await toWireTools(frame.tools) };
}

/**
 * The request for one conversation: as it stands, or (with `framed`) as a Fold turn sends it —
 * Fold's instructions in place of the conversation's own and its tools beside — with Fold's raw
 * estimate by class the way a turn makes it.
 */
async function requestOf(
  estimator: TokenEstimator,
  messages: readonly ModelMessage[],
  framed: FoldFrame | undefined,
): Promise<{ wire: WireMessage[]; tools?: WireTool[]; raw: ClassTokens; frameTokens: number }> {
  if (!framed) {
    return { wire: toWire(messages), ...(await requestRawClasses(estimator, messages)) };
  }
  const chat = messages.filter((m) => m.role !== "system");
  const raw = estimator.classTokensOfModelMessages(chat);
  addClassTokens(raw, framed.frame.overheadClasses);
  return {
    wire: [{ role: "system", content: framed.frame.instructions }, ...toWire(chat)],
    tools: framed.wireTools,
    raw,
    frameTokens: framed.frame.overheadTokens,
  };
}

export async function measureFamily(
  url: string,
  family: TokenizerFamily,
  conversations: readonly Conversation[],
  framed?: FoldFrame,
): Promise<{ samples: Sample[]; calibration: Calibration | null }> {
  const estimator = createEstimator();
  let calibration: Calibration | null = null;
  const samples: Sample[] = [];
  for (const conversation of conversations) {
    const { wire, tools, raw, frameTokens } = await requestOf(
      estimator,
      conversation.messages,
      framed,
    );
    const real = await realPromptTokens(url, family, wire, tools);
    samples.push({
      conversation,
      real,
      raw: classTotal(raw),
      cold: applyRatio(raw, classRatios(null)),
      calibrated: applyRatio(raw, classRatios(calibration)),
      chars: charsOf(wire),
    });
    const sample = calibrationSample(real, raw, frameTokens);
    if (sample !== null) calibration = nextCalibration(calibration, sample);
  }
  return { samples, calibration };
}

function familyFigures(
  family: TokenizerFamily,
  samples: readonly Sample[],
  context: BenchContext,
): Figures {
  const calibratedSamples = samples.slice(CALIBRATED_FROM - 1);
  const cold = errors(samples, (s) => s.cold);
  const calibrated = errors(calibratedSamples, (s) => s.calibrated);
  const raw = errors(samples, (s) => s.raw);
  const chars4 = errors(samples, (s) => Math.ceil(s.chars / 4));
  const name = (what: string) => `estimator.${family}_${what}`;
  const bias = (e: Errors) => `signed ${e.signedMean >= 0 ? "+" : ""}${e.signedMean.toFixed(1)} %`;
  context.note(
    name("cold_mean_err_pct"),
    `raw by class × cold priors; ${bias(cold)}; ${samples.length} turns; worst ${cold.worst}`,
  );
  context.note(
    name("cold_max_under_pct"),
    `largest under-estimate before any sample (0 = none): ${cold.worstUnder}`,
  );
  context.note(
    name("calibrated_mean_err_pct"),
    `turns ${CALIBRATED_FROM}–${samples.length}, estimate before learning; ${bias(calibrated)}`,
  );
  context.note(name("calibrated_max_err_pct"), `worst: ${calibrated.worst}`);
  context.note(name("raw_mean_err_pct"), `o200k estimate, no ratio; ${bias(raw)}`);
  context.note(name("chars4_mean_err_pct"), `ceil(chars / 4); ${bias(chars4)}`);
  return {
    [name("cold_mean_err_pct")]: round2(cold.mean),
    [name("cold_max_under_pct")]: round2(cold.maxUnder),
    [name("calibrated_mean_err_pct")]: round2(calibrated.mean),
    [name("calibrated_max_err_pct")]: round2(calibrated.max),
    [name("raw_mean_err_pct")]: round2(raw.mean),
    [name("chars4_mean_err_pct")]: round2(chars4.mean),
  };
}

/**
 * The same turns as a Fold turn sends them (its instructions and built-in tool schemas around
 * each conversation): how far the estimate of the whole request is, cold and calibrated.
 */
function framedFigures(
  family: TokenizerFamily,
  samples: readonly Sample[],
  framed: FoldFrame,
  context: BenchContext,
): Figures {
  const cold = errors(samples, (s) => s.cold);
  const calibrated = errors(samples.slice(CALIBRATED_FROM - 1), (s) => s.calibrated);
  const name = (what: string) => `estimator.${family}_framed_${what}`;
  const frame = `Fold's instructions and ${Object.keys(framed.frame.tools).length} tool schemas around each conversation (${framed.frame.overheadTokens} raw tokens)`;
  context.note(
    name("cold_max_under_pct"),
    `${frame}: largest under-estimate before any sample (0 = none): ${cold.worstUnder}`,
  );
  context.note(
    name("calibrated_mean_err_pct"),
    `${frame}: turns ${CALIBRATED_FROM}–${samples.length}, estimate before learning`,
  );
  context.note(name("calibrated_max_err_pct"), `${frame}: worst ${calibrated.worst}`);
  return {
    [name("cold_max_under_pct")]: round2(cold.maxUnder),
    [name("calibrated_mean_err_pct")]: round2(calibrated.mean),
    [name("calibrated_max_err_pct")]: round2(calibrated.max),
  };
}

/** Per-category detail (mean absolute % error), printed beside the harness table. */
function printDetail(family: TokenizerFamily, samples: readonly Sample[]): void {
  const categories = [...new Set(samples.map((s) => s.conversation.category))];
  const header = ["category", "n", "raw", "cold", "calibrated*", "chars/4", "raw signed"];
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
      fmt(errors(group, (s) => s.raw).signedMean),
    ]);
  }
  const widths = header.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? "").length)));
  console.log(`\nestimator: mean |error| % by category against ${family}`);
  console.log(`  (* calibrated counts turns ${CALIBRATED_FROM} on; signed < 0 means under)`);
  for (const line of lines) {
    const cells = line.map((cell, i) =>
      i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0),
    );
    console.log(`  ${cells.join("  ")}`);
  }
}

/** The fit's own coefficients: a measured class's ratio at its usual density, then each unit ratio. */
function printRatios(family: TokenizerFamily, calibration: Calibration | null): void {
  const ratios = calibration?.classFit?.ratios ?? classRatios(null);
  const cells = FIT_MEASURES.map((m) => `${m} ${(ratios[m] ?? 0).toFixed(3)}`);
  console.log(
    `  ${family}: ratios after ${calibration?.samples ?? 0} samples: ${cells.join(", ")}`,
  );
}

export const benchmark: Benchmark = {
  name: "estimator",
  async run(context) {
    const figures: Figures = {};
    const conversations = mixedConversations();
    const fake = await startFakeOpenAI({
      models: TOKENIZER_FAMILIES.map((family) => ({
        id: family,
        maxModelLen: 10_000_000,
        tokenizer: family,
      })),
      enforceContextWindow: false,
    });
    try {
      const frame = await foldFrame();
      for (const family of TOKENIZER_FAMILIES) {
        const { samples, calibration } = await measureFamily(fake.url, family, conversations);
        Object.assign(figures, familyFigures(family, samples, context));
        printDetail(family, samples);
        printRatios(family, calibration);
        const framed = await measureFamily(fake.url, family, conversations, frame);
        Object.assign(figures, framedFigures(family, framed.samples, frame, context));
      }
    } finally {
      await fake.close();
    }
    figures["estimator.conversations"] = conversations.length;
    context.note(
      "estimator.conversations",
      "turns per family: tests/bench/corpus + generated CJK and digit-heavy (estimator-mixed.ts)",
    );
    return figures;
  },
};
