/**
 * What five model families' tokenizers spend on each content class, against o200k: tokens of
 * the family's real tokenizer per o200k token, on probe texts of our own of that class alone
 * (one sentence, log or file at a time; the highest probe of each class). Measured by
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
  prose: [1.053, 1.053, 1.101, 1.126, 1.122],
  code: [1.007, 1.007, 1.058, 1.173, 1.133],
  json: [1.003, 1.003, 1.051, 1.165, 1.1],
  digits: [1.96, 1.0, 1.0, 1.96, 1.0],
  han: [0.875, 1.156, 0.813, 0.9, 1.4],
  kana: [0.857, 1.286, 1.0, 0.857, 1.857],
  hangul: [1.208, 1.125, 1.4, 0.971, 2.4],
  cyrillic: [1.433, 1.257, 1.343, 1.029, 1.964],
  greek: [2.667, 1.242, 1.556, 1.182, 3.444],
  arabic: [1.759, 1.333, 1.273, 1.152, 3.091],
  hebrew: [1.045, 3.045, 1.455, 1.409, 2.682],
  indic: [3.824, 3.923, 2.471, 0.941, 5.115],
  thai: [1.333, 1.333, 1.042, 0.952, 4.857],
  emoji: [0.761, 1.44, 1.16, 0.64, 1.44],
  script: [2.481, 4.63, 1.889, 1.37, 4.667],
  frame: [1.25, 1.25, 0.375, 1.25, 1.0],
};
