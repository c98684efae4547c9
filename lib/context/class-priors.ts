/**
 * What five model families' tokenizers spend on each content class, against o200k: tokens of
 * the family's real tokenizer per o200k token, on probe texts of our own of that class alone
 * (one sentence, file or digit group at a time, and for each writing system a set of short
 * everyday messages, where o200k's merged common words save most). Measured by
 * `npx tsx tests/bench/estimator-priors.ts`, which prints both tables; rerun it and paste
 * its output here when the classes or their probes change. `frame` is the chat template's
 * framing per message, against Fold's MESSAGE_OVERHEAD_TOKENS; `requestFrame` a request's own
 * (the template with no message), against REQUEST_OVERHEAD_TOKENS; `systemFrame` what a short
 * system message adds beyond its text, against SYSTEM_OVERHEAD_TOKENS.
 *
 * A first turn multiplies each class by the highest probe of any family (it over-estimates
 * whichever family it meets). Calibration then starts from the families' typical ratios and
 * learns how the classes move together from how the families differ (a model cheap on
 * Cyrillic is likely cheap on Arabic too).
 */
import type { ContentClass, MeasuredClass } from "./content-class";

/** Qwen 3, Llama 3, DeepSeek V3, Gemma 3, Claude. */
export const PROBED_FAMILIES = ["qwen3", "llama3", "deepseek_v3", "gemma3", "claude"] as const;

/**
 * Over all of a class's probes together: what a family typically spends. For a measured
 * class (a writing system, code), the mean of its probes' ratios: the ratio at the mean of
 * PROBE_UNIT_DENSITY.
 */
export const PROBE_RATIOS: Readonly<Record<ContentClass, readonly number[]>> = {
  prose: [1.057, 1.057, 1.104, 1.128, 1.124],
  code: [0.99, 0.989, 1.062, 1.196, 1.182],
  json: [1.003, 1.003, 1.053, 1.165, 1.101],
  digits1: [1.0, 1.0, 1.0, 1.0, 1.0],
  digits2: [2.0, 1.0, 1.0, 2.0, 1.0],
  digits3: [3.0, 1.0, 1.0, 3.0, 1.0],
  han: [0.821, 1.036, 0.751, 0.884, 1.401],
  kana: [0.868, 0.96, 0.969, 0.757, 1.503],
  hangul: [1.126, 1.001, 1.231, 0.906, 1.799],
  cyrillic: [1.302, 1.16, 1.211, 0.985, 1.799],
  greek: [2.107, 1.083, 1.339, 1.07, 2.819],
  arabic: [1.213, 1.262, 1.205, 1.049, 2.776],
  hebrew: [0.992, 2.277, 1.267, 1.158, 2.101],
  devanagari: [2.885, 1.594, 1.891, 0.851, 3.347],
  indic: [2.998, 3.572, 1.597, 0.883, 4.661],
  thai: [1.362, 1.244, 1.049, 0.854, 4.347],
  emoji: [0.761, 1.423, 1.056, 0.634, 1.423],
  script: [1.89, 3.392, 1.559, 1.047, 3.069],
  call: [1.162, 0.985, 0.0, 1.118, 1.309],
  frame: [1.25, 1.25, 0.375, 1.25, 1.0],
  requestFrame: [1.0, 1.667, 0.667, 1.333, 1.333],
  systemFrame: [1.25, 1.25, 0.0, 0.25, 0.0],
};

/** On the class's most expensive probe for that family: what a first turn must cover. */
export const PROBE_HIGHEST_RATIOS: Readonly<Record<ContentClass, readonly number[]>> = {
  prose: [1.057, 1.057, 1.104, 1.128, 1.124],
  code: [1.029, 1.029, 1.131, 1.329, 1.34],
  json: [1.003, 1.003, 1.053, 1.165, 1.101],
  digits1: [1.0, 1.0, 1.0, 1.0, 1.0],
  digits2: [2.0, 1.0, 1.0, 2.0, 1.0],
  digits3: [3.0, 1.0, 1.0, 3.0, 1.0],
  han: [1.0, 1.375, 1.0, 1.0, 1.778],
  kana: [1.214, 1.333, 1.417, 1.0, 2.556],
  hangul: [1.25, 1.154, 1.429, 1.0, 2.4],
  cyrillic: [1.75, 1.667, 1.833, 1.154, 2.833],
  greek: [2.667, 1.364, 1.636, 1.273, 3.636],
  arabic: [1.875, 2.375, 1.625, 1.444, 3.556],
  hebrew: [1.1, 3.111, 1.556, 1.409, 2.889],
  devanagari: [3.824, 2.176, 2.471, 1.0, 4.471],
  indic: [4.227, 5.318, 2.217, 1.091, 6.318],
  thai: [1.727, 1.5, 1.364, 1.182, 6.0],
  emoji: [0.761, 1.44, 1.16, 0.64, 1.44],
  script: [3.0, 5.429, 2.286, 1.583, 5.417],
  call: [1.162, 0.985, 0.0, 1.118, 1.309],
  frame: [1.25, 1.25, 0.375, 1.25, 1.0],
  requestFrame: [1.0, 1.667, 0.667, 1.333, 1.333],
  systemFrame: [1.25, 1.25, 0.0, 0.25, 0.0],
};

/**
 * A measured class's probes' second count (letters; code's indentation tabs) per o200k token:
 * their mean (where its typical ratio is read), lowest (a sparser segment counts as this
 * sparse) and highest.
 */
export const PROBE_UNIT_DENSITY: Readonly<
  Record<MeasuredClass, readonly [number, number, number]>
> = {
  han: [1.081, 0.8, 1.6],
  kana: [1.337, 0.909, 2.222],
  hangul: [1.092, 0.727, 1.364],
  cyrillic: [2.574, 1.727, 3.667],
  greek: [1.951, 1.444, 2.519],
  arabic: [2.313, 1.538, 3.25],
  hebrew: [1.83, 1.3, 2.778],
  devanagari: [2.389, 1.615, 3.235],
  indic: [1.943, 1.333, 2.636],
  thai: [2.438, 1.786, 3.364],
  script: [1.559, 0.409, 2.583],
  code: [0.036, 0.0, 0.164],
};

/**
 * How a family's ratio on a measured class moves per unit more that an o200k token holds (the
 * slope of its probes' ratios against their count per token): short everyday text, whose
 * common words o200k merges whole, costs most families more per o200k token, and Claude and
 * Gemma pay for indentation tabs that o200k merges.
 */
export const PROBE_UNIT_RATIOS: Readonly<Record<MeasuredClass, readonly number[]>> = {
  han: [0.126, 0.208, 0.216, 0.136, 0.443],
  kana: [0.243, 0.335, 0.407, 0.177, 1.024],
  hangul: [0.011, 0.07, 0.304, 0.128, 1.028],
  cyrillic: [0.23, 0.203, 0.17, 0.064, 0.538],
  greek: [0.895, 0.28, 0.409, 0.094, 1.343],
  arabic: [0.073, 0.169, 0.231, 0.214, 0.803],
  hebrew: [-0.03, 1.036, 0.332, 0.29, 0.845],
  devanagari: [1.153, 0.488, 0.61, 0.088, 1.184],
  indic: [1.009, 1.411, 0.279, -0.054, 1.673],
  thai: [0.371, 0.326, 0.145, 0.192, 1.75],
  script: [1.06, 1.865, 0.473, 0.543, 1.439],
  code: [0.158, 0.166, 0.065, 1.087, 1.376],
};
