import { CODE } from "./code";
import { LONG } from "./long";
import { MULTILINGUAL } from "./multilingual";
import { PROSE } from "./prose";
import { TOOLS } from "./tools";
import type { Conversation } from "./types";

export type { Category, Conversation } from "./types";

/**
 * The whole corpus, interleaved round-robin across its groups so that online calibration
 * sees a realistic mix (a user switches between prose, code, tools and languages) rather
 * than one kind of text for ten turns in a row.
 */
function interleave(groups: ReadonlyArray<readonly Conversation[]>): Conversation[] {
  const out: Conversation[] = [];
  const longest = Math.max(...groups.map((g) => g.length));
  for (let i = 0; i < longest; i++) {
    for (const group of groups) {
      const conversation = group[i];
      if (conversation) out.push(conversation);
    }
  }
  return out;
}

export const CORPUS: readonly Conversation[] = interleave([PROSE, CODE, TOOLS, MULTILINGUAL, LONG]);
