import { contentText } from "../fixtures/fake-openai/request";
import type { RecordedRequest } from "../fixtures/fake-openai/types";
import { round1 } from "./measure";
import type { Fact, Origin } from "./memory-facts";

/**
 * How the `memory` benchmark judges "kept": the exact planted string occurs, as a plain
 * substring, in the final chat request the fake server received — its messages as JSON, or
 * their content text. Independent of Fold's extractor and of `containsVerbatim`; the plan
 * guarantees no fact occurs by accident anywhere else. Loads no Fold module.
 */

/** Everything the final request showed the model, in both forms the matcher accepts. */
export function requestText(request: RecordedRequest | null): string {
  if (request === null) return "";
  const json = JSON.stringify(request.messages);
  const content = request.messages.map((m) => contentText(m)).join("\n");
  return `${json}\n${content}`;
}

export type Tally = { kept: Fact[]; lost: Fact[] };

export function tally(facts: readonly Fact[], text: string): Tally {
  const kept = facts.filter((f) => text.includes(f.value));
  return { kept, lost: facts.filter((f) => !kept.includes(f)) };
}

export function keptPct(t: Tally): number {
  const total = t.kept.length + t.lost.length;
  return total === 0 ? 0 : round1((t.kept.length / total) * 100);
}

export function byOrigin(facts: readonly Fact[], origin: Origin): Fact[] {
  return facts.filter((f) => f.origin === origin);
}

/** Tool facts the user mentioned again later. */
export function mentioned(facts: readonly Fact[]): Fact[] {
  return facts.filter((f) => f.mentionTurn !== null);
}

/** "3 of 10 (quote 1/2, url 0/2, …)": the count, then by kind. */
export function tallyText(t: Tally): string {
  const all = [...t.kept, ...t.lost];
  const kinds = [...new Set(all.map((f) => f.kind))];
  const byKind = kinds
    .map((kind) => {
      const kept = t.kept.filter((f) => f.kind === kind).length;
      return `${kind} ${kept}/${all.filter((f) => f.kind === kind).length}`;
    })
    .join(", ");
  return `${t.kept.length} of ${all.length} (${byKind})`;
}
