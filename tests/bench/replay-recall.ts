import type { ToolSet } from "ai";
import { eq } from "drizzle-orm";
import { chatRequestFrame } from "@/lib/ai/request-frame";
import { modelBudget } from "@/lib/chat/budget";
import { projectChat } from "@/lib/chat/compact";
import { chatRecall, cutInViewOf } from "@/lib/chat/recall";
import type { Overhead } from "@/lib/context/overhead";
import type { Db } from "@/lib/db/client";
import { loadHistory } from "@/lib/db/queries/messages";
import { coveredSeq } from "@/lib/db/queries/recall";
import { chat } from "@/lib/db/schema";
import { rowToUIMessage } from "@/lib/message/ui-message";
import type { Conversation } from "./replay-corpus";
import {
  ORIGINS,
  type Origin,
  type SampledIdentifier,
  sampleIdentifiers,
  turnTexts,
} from "./replay-identifiers";
import type { ReplayedConversation } from "./replay-run";
import { bodyText } from "./replay-score";

/**
 * The `replay` benchmark's recall score: of the sampled identifiers that are gone from a
 * conversation's last request, how many the `recall` tool gives back, asked as a model would
 * ask — by the value itself, or by a few words of what stood around it — through the product's
 * own port (`chatRecall`) on the chat the replay left, bound as a turn binds it (the messages its
 * view would send cut, Stage 0's placeholders, reachable besides the condensed ones). Whether a value came back is the bench's
 * own plain substring match on what the tool returned. This module loads Fold: import it only
 * after setting process.env.
 */

/** Words a context query carries: about what a model remembers of where a value stood. */
const CONTEXT_WORDS = 4;
/** How far from the value its context words are looked for. */
const CONTEXT_CHARS = 300;
/** A word for a context query: a letter, then at least two more word characters. */
const WORD = /\p{L}[\p{L}\p{N}_'-]{2,}/gu;
/** Pieces of one message a read may take (8,000 characters each) before it gives up. */
const MAX_READS = 50;

const wordsOf = (text: string) => [...text.matchAll(WORD)].map((m) => m[0]);

/**
 * Words in more than this share of a conversation's turns say nothing of where a value stood
 * ("output", "returncode" in every tool result of an agent's log): a query leaves them out.
 */
const COMMON_SHARE = 0.5;

/** The words of a conversation found in more than COMMON_SHARE of its turns, lower-cased. */
function commonWords(conversation: Conversation): Set<string> {
  const turns = new Map<string, number>();
  conversation.turns.forEach((_, i) => {
    const text = Object.values(turnTexts(conversation, i)).join("\n").toLowerCase();
    for (const word of new Set(wordsOf(text))) turns.set(word, (turns.get(word) ?? 0) + 1);
  });
  const limit = COMMON_SHARE * conversation.turns.length;
  return new Set([...turns].filter(([, n]) => n > limit).map(([word]) => word));
}

/**
 * A query of the telling words just before the value's first mention in its own origin (the
 * words just after it when fewer than two stand before): a few words that are not among the
 * conversation's `common` ones (commonWords), or null when there are not two near it.
 */
export function contextQuery(
  conversation: Conversation,
  id: SampledIdentifier,
  common: ReadonlySet<string>,
): string | null {
  const telling = (text: string) => wordsOf(text).filter((w) => !common.has(w.toLowerCase()));
  for (let i = 0; i < conversation.turns.length; i++) {
    const text = turnTexts(conversation, i)[id.origin];
    const at = text.indexOf(id.value);
    if (at === -1) continue;
    const before = telling(text.slice(Math.max(0, at - CONTEXT_CHARS), at)).slice(-CONTEXT_WORDS);
    const end = at + id.value.length;
    const words =
      before.length >= 2
        ? before
        : [...before, ...telling(text.slice(end, end + CONTEXT_CHARS))].slice(0, CONTEXT_WORDS);
    return words.length >= 2 ? words.join(" ") : null;
  }
  return null;
}

export type RecallTally = {
  /** Sampled identifiers absent from the last request. */
  lost: number;
  /** Of those, ones the tool returned when asked for the value itself. */
  byValue: number;
  /** Of those, ones with a context query, and how many its excerpts held. */
  withContext: number;
  byContext: number;
  /** …or the first match's message, read whole, held. */
  byContextRead: number;
  /** Lost ones stored only in messages neither the summary covers nor the view cuts (out of reach). */
  uncovered: number;
};

const emptyTally = (): RecallTally => ({
  lost: 0,
  byValue: 0,
  withContext: 0,
  byContext: 0,
  byContextRead: 0,
  uncovered: 0,
});

/** The whole text of one message through the tool's reads. */
async function readWhole(recall: ReturnType<typeof chatRecall>, number: number): Promise<string> {
  let text = "";
  let offset = 0;
  for (let read = 0; read < MAX_READS; read++) {
    const piece = await recall.read(number, offset);
    text += piece.text ?? "";
    if (piece.nextOffset === undefined) break;
    offset = piece.nextOffset;
  }
  return text;
}

/**
 * The messages the chat's next request would send cut, found as a turn finds them: the view the
 * product projects for the chat's next turn (projectChat: Stage 0, the hard wall where a cap
 * holds), with the replay's own tools in the request's frame.
 */
async function cutInNextView(
  db: Db,
  chatId: string,
  history: ReturnType<typeof rowToUIMessage>[],
  modelId: string,
  frame: Overhead,
): Promise<Set<string>> {
  const [row] = await db.select().from(chat).where(eq(chat.id, chatId));
  if (!row) return new Set();
  const { view } = projectChat({
    chat: row,
    history,
    model: await modelBudget(db, modelId),
    overheadTokens: frame.overheadTokens,
    overheadClasses: frame.overheadClasses,
  });
  return cutInViewOf(history, view);
}

async function scoreOne(
  db: Db,
  conversation: Conversation,
  run: ReplayedConversation,
  tally: Record<Origin, RecallTally>,
  modelId: string,
  frame: Overhead,
): Promise<void> {
  const seen = run.lastChatBody ? bodyText(run.lastChatBody) : "";
  const lost = sampleIdentifiers(conversation).filter((id) => !seen.includes(id.value));
  if (lost.length === 0) return;
  const rows = await loadHistory(db, run.chatId);
  const cut = await cutInNextView(db, run.chatId, rows.map(rowToUIMessage), modelId, frame);
  const recall = chatRecall(db, run.chatId, { cutInView: () => cut });
  const covered = (await coveredSeq(db, run.chatId)) ?? -1;
  const stored = rows.map((row) => ({
    id: row.id,
    seq: row.seq,
    text: JSON.stringify(row.parts),
  }));
  const common = commonWords(conversation);
  for (const id of lost) {
    const t = tally[id.origin];
    t.lost += 1;
    const asJson = JSON.stringify(id.value).slice(1, -1);
    const holders = stored.filter((row) => row.text.includes(asJson));
    if (holders.length > 0 && holders.every((row) => row.seq > covered && !cut.has(row.id))) {
      t.uncovered += 1;
    }

    const excerpts = async (query: string) => {
      const found = await recall.search(query);
      return { found, text: found.matches.map((m) => m.excerpt).join("\n") };
    };
    if ((await excerpts(id.value)).text.includes(id.value)) t.byValue += 1;

    const query = contextQuery(conversation, id, common);
    if (query === null) continue;
    t.withContext += 1;
    const { found, text } = await excerpts(query);
    if (text.includes(id.value)) {
      t.byContext += 1;
      t.byContextRead += 1;
      continue;
    }
    const first = found.matches[0];
    if (first && (await readWhole(recall, first.message)).includes(id.value)) t.byContextRead += 1;
  }
}

/** The recall tally by origin over every replayed conversation, on the chats the replay left. */
export async function scoreRecall(
  db: Db,
  conversations: readonly Conversation[],
  runs: readonly ReplayedConversation[],
  modelId: string,
  tools: ToolSet,
): Promise<Record<Origin, RecallTally>> {
  const frame = await chatRequestFrame(new Date(), tools);
  const tally = Object.fromEntries(ORIGINS.map((o) => [o, emptyTally()])) as Record<
    Origin,
    RecallTally
  >;
  for (const run of runs) {
    const conversation = conversations.find((c) => c.id === run.id);
    if (conversation) await scoreOne(db, conversation, run, tally, modelId, frame);
  }
  return tally;
}

/** The tallies of all origins added up. */
export function totalRecall(tally: Record<Origin, RecallTally>): RecallTally {
  const total = emptyTally();
  for (const t of Object.values(tally)) {
    for (const key of Object.keys(total) as (keyof RecallTally)[]) total[key] += t[key];
  }
  return total;
}
