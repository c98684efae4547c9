/**
 * Silent truncation (issue 15): some local servers (Ollama first of all) cut a prompt longer
 * than the context they run with to its last N tokens instead of refusing it, and report the
 * cut count as usage. Fold sees it only there: the provider counted far fewer tokens than Fold
 * sent. Such a turn says nothing about the tokenizer (calibration must not learn from it) and
 * a lot about the window: the server kept about as many tokens as it can hold.
 */

import { PROBE_RATIOS } from "./class-priors";
import { type ClassTokens, CONTENT_CLASSES, type ContentClass } from "./content-class";

/** A whole request counted below this share of Fold's estimate was cut (the 70 %). */
export const TRUNCATION_RATIO = 0.7;
/**
 * When the request only adds to the previous one of the chat, the provider's count must grow
 * by what was added, give or take this share of it (the estimator's error on a few messages)…
 */
export const GROWTH_TOLERANCE = 0.2;
/** …and never less than this many tokens (framing the estimator does not see). */
export const MIN_SHORTFALL_TOKENS = 48;
/**
 * How many times a model's recent miss of its calibrated estimate (`countNoise`, the largest) a
 * shortfall must exceed: the last count and this one, each as far off, in opposite directions.
 */
export const NOISE_SPREADS = 2;
/**
 * No server runs a chat model with a smaller context: a count below it says more about a
 * server that reports only the tokens it had not cached than about a window.
 */
export const MIN_OBSERVED_WINDOW_TOKENS = 1024;

export type TruncationInput = {
  /** The provider's count of the turn's first request. */
  reportedTokens: number;
  /** Fold's estimate of that request: raw (o200k) and calibrated for the model. */
  estimatedRawTokens: number;
  estimatedTokens: number;
  /** The raw estimate by content class, when known: what the cheapest family would count. */
  estimatedRawClasses?: ClassTokens;
  /**
   * When the request is the previous one of the chat plus what was added since: the
   * provider's count of the previous request, and Fold's calibrated estimate of the rest.
   */
  previous?: { reportedTokens: number; addedTokens: number };
  /**
   * How far this model's count has lately missed Fold's calibrated estimate, as a share (0 when
   * not known yet, lib/context/calibration.ts): a count that wanders that much on its own says
   * nothing of a cut within that reach.
   */
  countNoise?: number;
};

export type Truncation = {
  /** What the server kept: about the window it runs the model with. */
  keptTokens: number;
  /** Fold's best estimate of what it sent. */
  sentTokens: number;
  /** Which rule saw it: the whole request, or its growth since the previous one. */
  rule: "ratio" | "growth";
};

/** Per class, the least any probed family typically spends per o200k token (class-priors.ts). */
const CHEAPEST_RATIOS = Object.fromEntries(
  CONTENT_CLASSES.map((c) => [c, Math.min(...PROBE_RATIOS[c])]),
) as Record<ContentClass, number>;

/**
 * The fewest tokens a known family would count for this content: some price a class far below
 * o200k (Gemma ≈ 0.6 on emoji, DeepSeek V3's template leaves tool calls out), so a fair count
 * of such a request falls below 70 % of the raw estimate before calibration has learned it.
 */
function cheapestCount(raw: ClassTokens): number {
  return CONTENT_CLASSES.reduce((sum, c) => sum + raw[c] * CHEAPEST_RATIOS[c], 0);
}

/** The truncation a turn's usage shows, or null when the count is what Fold expected. */
export function detectTruncation(input: TruncationInput): Truncation | null {
  const { reportedTokens } = input;
  if (reportedTokens < MIN_OBSERVED_WINDOW_TOKENS) return null;
  // The cold-start margin (and a learned ratio above 1) must not make a fair count look short,
  // nor a family that prices this content below o200k.
  const expected = Math.min(
    input.estimatedRawTokens,
    input.estimatedTokens,
    input.estimatedRawClasses ? cheapestCount(input.estimatedRawClasses) : Number.POSITIVE_INFINITY,
  );
  if (reportedTokens < TRUNCATION_RATIO * expected) {
    return { keptTokens: reportedTokens, sentTokens: input.estimatedTokens, rule: "ratio" };
  }
  const previous = input.previous;
  if (!previous) return null;
  const tolerance = Math.max(
    MIN_SHORTFALL_TOKENS,
    GROWTH_TOLERANCE * previous.addedTokens,
    NOISE_SPREADS * (input.countNoise ?? 0) * reportedTokens,
  );
  // A count about as large as Fold's own estimate of everything it sent is whole, whatever the
  // previous count: that one may measure a request this one does not simply extend (the replay
  // benchmark's chats met counts that grew by less than the new messages, for requests counted
  // within a few tokens of their estimate, and learned a window of a third of the real one).
  if (reportedTokens >= input.estimatedTokens - tolerance) return null;
  const grownTo = previous.reportedTokens + previous.addedTokens;
  const shortfall = grownTo - reportedTokens;
  if (shortfall <= tolerance) return null;
  return { keptTokens: reportedTokens, sentTokens: grownTo, rule: "growth" };
}
