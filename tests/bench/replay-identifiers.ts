import { createHash } from "node:crypto";
import { argsText, type Conversation } from "./replay-corpus";

/**
 * The `replay` benchmark's own identifier matcher, independent of Fold's extractor
 * (lib/compaction/identifiers.ts): a few plain regexes for what an agent must not lose —
 * URLs, file paths, hex hashes and numbers with units — and a deterministic sample of them
 * per conversation and origin, preferring ones the conversation stops mentioning early, so
 * keeping them means they survived compaction.
 */

export const ORIGINS = ["user", "assistant", "tool_args", "tool_results"] as const;
export type Origin = (typeof ORIGINS)[number];

/** Identifiers sampled per conversation and origin. */
export const SAMPLE_PER_ORIGIN = 10;
/** Shorter strings match by accident anywhere ("0 s" inside "10 s"). */
const MIN_CHARS = 6;

const PATTERNS: readonly RegExp[] = [
  // URLs, without trailing punctuation.
  /https?:\/\/[^\s"'`<>()[\]{}]+[^\s"'`<>()[\]{}.,;:!?]/g,
  // Absolute paths with at least two segments, not inside a URL or a longer path.
  /(?<![\w:/.~-])(?:\/[\w.@+-]+){2,}/g,
  // Relative paths ending in a file name with an extension: src/pkg/module.py.
  /(?<![\w/.-])(?:[\w.-]+\/)+[\w-]+\.[A-Za-z0-9]{1,6}(?![\w/])/g,
  // Hex hashes of 7+ digits, with at least one letter and one digit.
  /(?<![\w])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,64}(?![\w])/g,
  // Numbers with a unit: 4.8 ms, 12 MB, 250px, 99.5%.
  /(?<![\w.])\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|sec|seconds|minutes|min|KB|kB|MB|GB|KiB|MiB|GiB|bytes|px|tokens|%)(?![\w])/g,
];

export function identifiersIn(text: string): string[] {
  const found = new Set<string>();
  for (const pattern of PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      const value = match[0];
      if (value.length >= MIN_CHARS) found.add(value);
    }
  }
  return [...found];
}

/** The texts of one turn by origin. */
export function turnTexts(conversation: Conversation, index: number): Record<Origin, string> {
  const turn = conversation.turns[index];
  const calls = turn?.toolCalls ?? [];
  return {
    user: turn?.role === "user" ? turn.text : "",
    assistant: turn?.role === "assistant" ? turn.text : "",
    tool_args: calls.map((c) => argsText(c.args)).join("\n"),
    tool_results: calls.map((c) => c.result).join("\n"),
  };
}

export type SampledIdentifier = {
  value: string;
  origin: Origin;
  /** Last turn (any origin) that mentions it; early means only a summary can carry it. */
  lastSeenTurn: number;
  /** Whether that last mention is in the conversation's first half. */
  firstHalfOnly: boolean;
};

function stableRank(conversationId: string, value: string): string {
  return createHash("sha1").update(`${conversationId}\u0000${value}`).digest("hex");
}

/**
 * Up to `perOrigin` identifiers per origin: those last mentioned in the first half of the
 * conversation first, then the rest, each group in a fixed pseudo-random order.
 */
export function sampleIdentifiers(
  conversation: Conversation,
  perOrigin = SAMPLE_PER_ORIGIN,
): SampledIdentifier[] {
  const turns = conversation.turns.map((_, i) => turnTexts(conversation, i));
  const wholeTurns = turns.map((t) => ORIGINS.map((o) => t[o]).join("\n"));
  const half = Math.floor(conversation.turns.length / 2);
  const sampled: SampledIdentifier[] = [];
  for (const origin of ORIGINS) {
    const values = new Set(turns.flatMap((t) => identifiersIn(t[origin])));
    const candidates = [...values].map((value) => {
      let lastSeenTurn = 0;
      for (let i = wholeTurns.length - 1; i >= 0; i--) {
        if (wholeTurns[i]?.includes(value)) {
          lastSeenTurn = i;
          break;
        }
      }
      return { value, origin, lastSeenTurn, firstHalfOnly: lastSeenTurn < half };
    });
    candidates.sort(
      (a, b) =>
        Number(b.firstHalfOnly) - Number(a.firstHalfOnly) ||
        stableRank(conversation.id, a.value).localeCompare(stableRank(conversation.id, b.value)),
    );
    sampled.push(...candidates.slice(0, perOrigin));
  }
  return sampled;
}
