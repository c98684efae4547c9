/**
 * What five model families' tokenizers spend on each content class, against o200k: tokens of
 * the family's real tokenizer per o200k token, on probe texts of our own of that class alone
 * (one sentence, file or digit group at a time, and for each writing system a set of short
 * everyday messages, where o200k's merged common words save most). Measured by
 * `npx tsx tests/bench/estimator-priors.ts`, which prints both tables; rerun it and paste
 * its output here when the classes or their probes change. `frame` is the chat template's
 * framing per message, against Fold's MESSAGE_OVERHEAD_TOKENS.
 *
 * A first turn multiplies each class by the highest probe of any family (it over-estimates
 * whichever family it meets). Calibration then starts from the families' typical ratios and
 * learns how the classes move together from how the families differ (a model cheap on
 * Cyrillic is likely cheap on Arabic too).
 */
import type { ContentClass } from "./content-class";

/** Qwen 3, Llama 3, DeepSeek V3, Gemma 3, Claude. */
export const PROBED_FAMILIES = ["qwen3", "llama3", "deepseek_v3", "gemma3", "claude"] as const;

/** Over all of a class's probes together: what a family typically spends. */
export const PROBE_RATIOS: Readonly<Record<ContentClass, readonly number[]>> = {
  prose: [1.056, 1.056, 1.102, 1.128, 1.124],
  code: [0.997, 0.997, 1.056, 1.159, 1.134],
  json: [1.003, 1.003, 1.053, 1.165, 1.101],
  digits1: [1.0, 1.0, 1.0, 1.0, 1.0],
  digits2: [2.0, 1.0, 1.0, 2.0, 1.0],
  digits3: [3.0, 1.0, 1.0, 3.0, 1.0],
  han: [0.8, 1.056, 0.737, 0.867, 1.374],
  kana: [0.789, 0.921, 0.913, 0.686, 1.417],
  hangul: [1.146, 0.995, 1.208, 0.917, 1.771],
  cyrillic: [1.29, 1.15, 1.227, 0.966, 1.783],
  greek: [2.163, 1.107, 1.348, 1.067, 2.865],
  arabic: [1.248, 1.215, 1.187, 1.028, 2.696],
  hebrew: [0.993, 2.304, 1.27, 1.182, 2.115],
  indic: [2.94, 2.368, 1.731, 0.801, 3.871],
  thai: [1.344, 1.212, 1.046, 0.861, 4.258],
  emoji: [0.761, 1.423, 1.056, 0.634, 1.423],
  script: [1.533, 2.739, 1.375, 0.835, 2.571],
  call: [1.162, 0.985, 0.0, 1.118, 1.309],
  frame: [1.25, 1.25, 0.375, 1.25, 1.0],
};

/** On the class's most expensive probe for that family: what a first turn must cover. */
export const PROBE_HIGHEST_RATIOS: Readonly<Record<ContentClass, readonly number[]>> = {
  prose: [1.056, 1.056, 1.102, 1.128, 1.124],
  code: [1.029, 1.029, 1.131, 1.329, 1.34],
  json: [1.003, 1.003, 1.053, 1.165, 1.101],
  digits1: [1.0, 1.0, 1.0, 1.0, 1.0],
  digits2: [2.0, 1.0, 1.0, 2.0, 1.0],
  digits3: [3.0, 1.0, 1.0, 3.0, 1.0],
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
  call: [1.162, 0.985, 0.0, 1.118, 1.309],
  frame: [1.25, 1.25, 0.375, 1.25, 1.0],
};
