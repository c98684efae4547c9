/**
 * What five model families' tokenizers spend on each content class, against o200k: tokens of
 * the family's real tokenizer per o200k token, on probe texts of our own of that class alone
 * (one sentence, log or file at a time, and for each writing system a set of short everyday
 * messages, where o200k's merged common words save most; the highest probe of each class). Measured by
 * `npx tsx tests/bench/estimator-priors.ts`, which prints this table; rerun it and paste
 * its output here when the classes or their probes change. `frame` is the chat template's
 * framing per message, against Fold's MESSAGE_OVERHEAD_TOKENS.
 *
 * Calibration starts each class at the highest of these (a first turn over-estimates
 * whichever family it meets) and learns how the classes move together from how the families
 * differ (a model cheap on Cyrillic is likely cheap on Arabic too).
 */
import type { ContentClass } from "./content-class";

/** Qwen 3, Llama 3, DeepSeek V3, Gemma 3, Claude. */
export const PROBED_FAMILIES = ["qwen3", "llama3", "deepseek_v3", "gemma3", "claude"] as const;

export const PROBE_RATIOS: Readonly<Record<ContentClass, readonly number[]>> = {
  prose: [1.057, 1.057, 1.105, 1.13, 1.127],
  code: [1.007, 1.007, 1.12, 1.298, 1.34],
  json: [1.003, 1.003, 1.051, 1.165, 1.1],
  digits: [1.96, 1.0, 1.0, 1.96, 1.0],
  han: [1.0, 1.375, 1.0, 1.0, 1.778],
  kana: [0.917, 1.286, 1.375, 0.857, 2.556],
  hangul: [1.25, 1.125, 1.4, 1.0, 2.4],
  cyrillic: [1.667, 1.667, 1.833, 1.143, 2.833],
  greek: [2.667, 1.364, 1.636, 1.273, 3.636],
  arabic: [1.875, 2.375, 1.625, 1.286, 3.273],
  hebrew: [1.1, 3.111, 1.556, 1.409, 2.889],
  indic: [3.824, 4.111, 2.471, 1.0, 5.556],
  thai: [1.727, 1.5, 1.364, 1.182, 6.0],
  emoji: [0.761, 1.44, 1.16, 0.64, 1.44],
  script: [3.0, 5.429, 2.286, 1.583, 5.417],
  frame: [1.25, 1.25, 0.375, 1.25, 1.0],
};
