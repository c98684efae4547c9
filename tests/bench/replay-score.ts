import type { Conversation } from "./replay-corpus";
import { type Origin, sampleIdentifiers } from "./replay-identifiers";
import type { ReplayedConversation } from "./replay-run";

/** Scores a replay: identifiers kept in the last request, and how compaction behaved. */

/** Every string in a request body, joined: what "appears in the body" is matched against. */
export function bodyText(body: unknown): string {
  const strings: string[] = [];
  const walk = (value: unknown) => {
    if (typeof value === "string") strings.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(body);
  return strings.join("\n");
}

export type KeptTally = {
  sampled: number;
  kept: number;
  /** Of the sampled ones, those last mentioned in the conversation's first half. */
  firstHalfOnly: number;
  firstHalfOnlyKept: number;
  /** A few lost values, for the notes. */
  lostExamples: string[];
};

const LOST_EXAMPLES = 3;

export function scoreKept(
  conversations: readonly Conversation[],
  runs: readonly ReplayedConversation[],
): Record<Origin, KeptTally> {
  const empty = (): KeptTally => ({
    sampled: 0,
    kept: 0,
    firstHalfOnly: 0,
    firstHalfOnlyKept: 0,
    lostExamples: [],
  });
  const tally: Record<Origin, KeptTally> = {
    user: empty(),
    assistant: empty(),
    tool_args: empty(),
    tool_results: empty(),
  };
  for (const run of runs) {
    const conversation = conversations.find((c) => c.id === run.id);
    if (!conversation) continue;
    const seen = run.lastChatBody ? bodyText(run.lastChatBody) : "";
    for (const id of sampleIdentifiers(conversation)) {
      const t = tally[id.origin];
      const kept = seen.includes(id.value);
      t.sampled += 1;
      t.kept += Number(kept);
      t.firstHalfOnly += Number(id.firstHalfOnly);
      t.firstHalfOnlyKept += Number(id.firstHalfOnly && kept);
      if (!kept && t.lostExamples.length < LOST_EXAMPLES) t.lostExamples.push(id.value);
    }
  }
  return tally;
}

export type CompactionTally = {
  compactions: number;
  /** Prompt tokens of the first chat request after each compaction. */
  fillTokens: number[];
  /** Compactions with no chat request after them in their conversation. */
  withoutFill: number;
  /** Compactions with a next call in their conversation, and those whose next call compacted. */
  withNextCall: number;
  refired: number;
};

export function scoreCompactions(runs: readonly ReplayedConversation[]): CompactionTally {
  const tally: CompactionTally = {
    compactions: 0,
    fillTokens: [],
    withoutFill: 0,
    withNextCall: 0,
    refired: 0,
  };
  for (const run of runs) {
    for (const [k, call] of run.calls.entries()) {
      if (call.compactions === 0) continue;
      const next = run.calls[k + 1];
      const fill = call.chatAfterSummary ?? next?.chat[0]?.promptTokens;
      for (let n = 0; n < call.compactions; n++) {
        tally.compactions += 1;
        if (fill === undefined) tally.withoutFill += 1;
        else tally.fillTokens.push(fill);
        if (!next) continue;
        tally.withNextCall += 1;
        if (next.compactions > 0) tally.refired += 1;
      }
    }
  }
  return tally;
}

export function pct(part: number, whole: number): number {
  return whole > 0 ? Math.round((part / whole) * 1000) / 10 : 0;
}
