import type { RecallMatch, RecallPort } from "@/lib/ai/tools/recall";
import { serializeMessage } from "@/lib/compaction/serialize";
import { isTracePart } from "@/lib/compaction/view";
import type { Db } from "@/lib/db/client";
import {
  coveredMessagesMatching,
  coveredSeq,
  type MatchedRow,
  messageAtSeq,
  type RecalledRow,
} from "@/lib/db/queries/recall";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { codePointBoundary } from "@/lib/message/unstorable-text";

/**
 * The `recall` tool's side in the database (lib/ai/tools/recall.ts): search the messages a
 * chat's summary covers by their words (text, file names, tool calls' arguments and outputs;
 * never a file's data nor the JSON around it, lib/db/queries/recall.ts), and read them as the
 * summarizer reads them (role tags, tool calls with their arguments, tool outputs) but whole.
 * Message numbers are positions in the chat, 1-based, as the summary's references cite them.
 */

/** Candidates the database filter hands over for scoring: those holding the rarest terms. */
const CANDIDATES = 200;
/**
 * Below this a message matched only words every reachable message of a chat of twenty or more
 * holds (ln(21/20)): no sign of what was asked for. In a shorter chat such a word still counts.
 */
const MIN_WEIGHT = Math.log(21 / 20);
export const RECALL_MAX_MATCHES = 5;
/** An excerpt: the match with some lead-in and what follows (~150 tokens). */
export const RECALL_EXCERPT_CHARS = 600;
const EXCERPT_LEAD_CHARS = 200;
/** One read: ~2,000 tokens of a message; a longer one goes on at `nextOffset`. */
export const RECALL_READ_CHARS = 8_000;
const MAX_TERMS = 8;
/** A word shorter than this is searched only as part of the whole query (it matches too much). */
const MIN_TERM_CHARS = 3;

const NOTHING_COVERED =
  "Nothing in this chat is condensed yet: every message is in the conversation as written.";

const position = (seq: number) => seq + 1;
const coveredRange = (seq: number | null) => (seq === null ? null : `1-${position(seq)}`);

/** The text of a stored message as the model would read it, tool outputs uncut. */
function messageText(row: RecalledRow): string {
  const uiMessage = { id: row.id, role: row.role, parts: row.parts } as FoldUIMessage;
  return serializeMessage(uiMessage, { toolOutputChars: Number.POSITIVE_INFINITY });
}

/**
 * Lower case as Postgres's ILIKE folds it (the database filter and the scoring must agree), one
 * UTF-16 unit for one (excerpts are cut where the folded text matched): JavaScript lowers the
 * Turkish dotted capital İ to two units (i and a combining dot), Postgres to a plain i.
 */
function foldCase(text: string): string {
  return text.replaceAll("\u0130", "i").toLowerCase();
}

/**
 * What to look for: the whole query, and its words (split at white space, outer punctuation
 * dropped) long enough to mean something; an identifier stays one term.
 */
export function recallTerms(query: string): { phrase: string; terms: string[] } {
  const phrase = foldCase(query.trim());
  const words = phrase
    .split(/\s+/)
    .map((word) => word.replace(/^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu, ""))
    .filter((word) => word.length >= MIN_TERM_CHARS);
  const terms = [...new Set([phrase, ...words])].filter(Boolean).slice(0, MAX_TERMS);
  return { phrase, terms };
}

/**
 * Where in `lower` (the message as the model reads it) the excerpt should center: the phrase,
 * else the longest word found that it holds as searched (a tool's argument is quoted as JSON
 * there, where a quote or a line break is escaped), else its start.
 */
function matchAt(lower: string, phrase: string, found: readonly string[]): number {
  for (const term of [phrase, ...[...found].sort((a, b) => b.length - a.length)]) {
    const at = lower.indexOf(term);
    if (at !== -1) return at;
  }
  return 0;
}

/** A tag of the text the model reads (`<user>`, `</assistant>`, `<tool-call name="…">`). */
const TAG = /<\/?[a-z][\w-]*(?:\s[^<>\n]*)?>/y;

/** The tag that holds `at` strictly inside it, as [its start, its end]; null when none does. */
function tagAround(text: string, at: number): [number, number] | null {
  const open = text.lastIndexOf("<", at - 1);
  if (open === -1) return null;
  TAG.lastIndex = open;
  const close = TAG.test(text) ? TAG.lastIndex : -1;
  return close > at ? [open, close] : null;
}

/** About RECALL_EXCERPT_CHARS of the text around `at`, never cut inside a character or a tag. */
function excerpt(text: string, at: number): string {
  let start = codePointBoundary(text, Math.max(0, at - EXCERPT_LEAD_CHARS));
  start = tagAround(text, start)?.[1] ?? start;
  let end = codePointBoundary(text, Math.min(text.length, start + RECALL_EXCERPT_CHARS));
  end = tagAround(text, end)?.[0] ?? end;
  return `${start > 0 ? "…" : ""}${text.slice(start, end)}${end < text.length ? "…" : ""}`;
}

/**
 * Scores candidates on the text the database searched in them (the same words, so the filter
 * and the score agree): each word found counts its weight (`weightOf`: how rare it is in the
 * chat, coveredMessagesMatching; one each without), the whole query as much as all its words
 * together; ties go to the newer message. A message that holds only words nearly every message
 * holds is no match. The excerpt quotes the message as the model reads it.
 */
export function rankMatches(
  rows: readonly MatchedRow[],
  query: string,
  limit = RECALL_MAX_MATCHES,
  weightOf: (term: string) => number = () => 1,
): RecallMatch[] {
  const { phrase, terms } = recallTerms(query);
  const words = terms.filter((term) => term !== phrase);
  const allWords = words.reduce((sum, word) => sum + weightOf(word), 0);
  const scored = rows.flatMap((row) => {
    const searched = foldCase(row.searched);
    const found = words.filter((word) => searched.includes(word));
    const hasPhrase = searched.includes(phrase);
    const score =
      found.reduce((sum, word) => sum + weightOf(word), 0) +
      (hasPhrase ? Math.max(weightOf(phrase), allWords, MIN_WEIGHT) : 0);
    if (score < MIN_WEIGHT) return [];
    const text = messageText(row);
    const match = {
      message: position(row.seq),
      role: row.role,
      excerpt: excerpt(text, matchAt(foldCase(text), phrase, found)),
    };
    return [{ score, seq: row.seq, match }];
  });
  return scored
    .sort((a, b) => b.score - a.score || b.seq - a.seq)
    .slice(0, limit)
    .map((s) => s.match);
}

/**
 * Besides what the summary covers: the messages past it whose copy in the model's view is cut
 * (an old tool output sent as a placeholder, arguments shortened, a part capped by the hard
 * wall), as the turn found them once its view was built. Their stored words are as far from the
 * model as a condensed message's.
 */
export type RecallScope = { cutInView?: () => ReadonlySet<string> };

/**
 * The messages of `history` the model's `view` sends cut: the view keeps the parts it leaves
 * alone as the history holds them (lib/compaction/view.ts), and the timeline's traces it drops
 * were never the model's.
 */
export function cutInViewOf(
  history: readonly FoldUIMessage[],
  view: readonly FoldUIMessage[],
): Set<string> {
  const stored = new Map(history.map((m) => [m.id, m]));
  const cut = new Set<string>();
  for (const sent of view) {
    const own = stored.get(sent.id)?.parts.filter((part) => !isTracePart(part));
    if (own && sent.parts.some((part, i) => part !== own[i])) cut.add(sent.id);
  }
  return cut;
}

/** The recall tool bound to one chat. */
export function chatRecall(db: Db, chatId: string, scope: RecallScope = {}): RecallPort {
  const cut = () => scope.cutInView?.() ?? new Set<string>();
  return {
    async search(query) {
      const covered = await coveredSeq(db, chatId);
      const alsoIds = [...cut()];
      if (covered === null && alsoIds.length === 0) {
        return { covered: null, matches: [], note: NOTHING_COVERED };
      }
      const { terms } = recallTerms(query);
      const { rows, weights } = await coveredMessagesMatching(db, chatId, {
        coveredSeq: covered ?? -1,
        alsoIds,
        terms,
        limit: CANDIDATES,
      });
      const weightOf = (term: string) => weights[terms.indexOf(term)] ?? 0;
      const matches = rankMatches(rows, query, RECALL_MAX_MATCHES, weightOf);
      return matches.length > 0
        ? { covered: coveredRange(covered), matches }
        : {
            covered: coveredRange(covered),
            matches,
            note: "No condensed message holds that. Try other words, or one exact value.",
          };
    },
    async read(number, offset) {
      const { row, coveredSeq: covered } = await messageAtSeq(db, chatId, number - 1);
      const isCut = row !== null && cut().has(row.id);
      if (covered === null && !isCut) return { covered: null, note: NOTHING_COVERED };
      const range = coveredRange(covered);
      if (!row) return { covered: range, note: `This chat has no message ${number}.` };
      if (row.seq > (covered ?? -1) && !isCut) {
        return {
          covered: range,
          note: `Message ${number} is not condensed: it is in the conversation as written.`,
        };
      }
      const text = messageText(row);
      const from = codePointBoundary(text, Math.min(offset, text.length));
      const to = codePointBoundary(text, Math.min(text.length, from + RECALL_READ_CHARS));
      return {
        covered: range,
        message: number,
        role: row.role,
        text: text.slice(from, to),
        ...(to < text.length ? { nextOffset: to } : {}),
      };
    },
  };
}
