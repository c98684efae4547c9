import { sql } from "drizzle-orm";
import { contentText } from "../fixtures/fake-openai/request";
import { isSummaryRequest } from "../fixtures/fake-openai/summarizer";
import type { FakeOpenAI, RecordedRequest, ScriptedReply } from "../fixtures/fake-openai/types";
import { type BenchChat, openChat, sendBenchTurn } from "./chat-turns";
import type { MemoryTurn } from "./memory-plan";

/**
 * One variant of the `memory` benchmark: every planned turn goes through the real
 * POST /api/chat handler, in-process, against a fake server of its own. What Fold stored is
 * read back with plain SQL, not through Fold's queries. This module loads Fold: import it
 * only after setting process.env.
 */

/** A progress line on stderr this often, so a slow run shows where it is. */
const PROGRESS_EVERY_TURNS = 50;

type Database = BenchChat["database"];

export type FailedTurn = { turn: number; detail: string };

export type VariantRaw = {
  turns: number;
  /** Turns whose stream carried an error, or whose reply was not stored. */
  failed: FailedTurn[];
  /** The last turn's last chat request (not a summarizer's): what the model saw at the end. */
  finalRequest: RecordedRequest | null;
  /** Summarizer requests answered 200, and of those the ones cut at max_tokens. */
  summaries: number;
  summariesCut: number;
  /**
   * Of those, the requests for some sections only (the ones a cut reply left unfinished, asked
   * for again), and the ones among them answered in full.
   */
  refillsAsked: number;
  refillsWhole: number;
  /** Summarizer requests answered with an error (the scripted failures, or a 400). */
  summarizerErrors: number;
  /** Chat requests the fake server rejected for the window. */
  chatOverflows: number;
  /** fetch_url calls whose result reached the stream, and those that errored. */
  toolResults: number;
  toolErrors: number;
  /** Turns that left a scripted reply unused (the model was asked fewer times than planned). */
  unusedScripts: number;
  /** compaction_event rows of the chat by outcome. */
  outcomes: Record<string, number>;
  seconds: number;
};

async function rows<T>(database: Database, query: ReturnType<typeof sql>): Promise<T[]> {
  // Both drivers (pg and PGlite) answer a raw query with `{ rows }`.
  const result = (await database.db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

async function isStored(database: Database, chatId: string, messageId: unknown): Promise<boolean> {
  if (typeof messageId !== "string") return false;
  const found = await rows<{ id: string }>(
    database,
    sql`select id from message where chat_id = ${chatId} and id = ${messageId}`,
  );
  return found.length > 0;
}

async function outcomesOf(database: Database, chatId: string): Promise<Record<string, number>> {
  const counted = await rows<{ outcome: string; n: number }>(
    database,
    sql`select outcome, count(*)::int as n from compaction_event where chat_id = ${chatId} group by outcome`,
  );
  return Object.fromEntries(counted.map((r) => [r.outcome, Number(r.n)]));
}

/** What the model answers this turn: the page fetch first when the turn has one. */
function script(turn: MemoryTurn, origin: string): ScriptedReply[] {
  const reply: ScriptedReply = { text: turn.reply };
  if (turn.fetch === null) return [reply];
  const url = `${origin}${turn.fetch}`;
  return [{ toolCalls: [{ name: "fetch_url", arguments: { url } }] }, reply];
}

export async function runVariant(input: {
  database: Database;
  fake: FakeOpenAI;
  pageOrigin: string;
  turns: readonly MemoryTurn[];
  modelId: string;
  email: string;
  log: (line: string) => void;
}): Promise<VariantRaw> {
  const { database, fake, turns, modelId, log } = input;
  const started = performance.now();
  const chat = await openChat(database, input.email, modelId);
  const raw: VariantRaw = {
    turns: 0,
    failed: [],
    finalRequest: null,
    summaries: 0,
    summariesCut: 0,
    refillsAsked: 0,
    refillsWhole: 0,
    summarizerErrors: 0,
    chatOverflows: 0,
    toolResults: 0,
    toolErrors: 0,
    unusedScripts: 0,
    outcomes: {},
    seconds: 0,
  };
  for (const turn of turns) {
    fake.reset();
    fake.script(...script(turn, input.pageOrigin));
    const { chunks, problem: refused } = await sendBenchTurn(chat, turn.text);
    let problem = refused;
    raw.turns += 1;

    const replyId = chunks.find((c) => c.type === "start")?.messageId;
    if (!problem && !(await isStored(database, chat.chatId, replyId))) problem = "no stored reply";
    if (problem) raw.failed.push({ turn: turn.index + 1, detail: problem });
    if (fake.pendingScript > 0) raw.unusedScripts += 1;

    const fetchCalls = new Set(
      chunks
        .filter((c) => c.type === "tool-input-available" && c.toolName === "fetch_url")
        .map((c) => c.toolCallId),
    );
    for (const c of chunks) {
      if (!fetchCalls.has(c.toolCallId)) continue;
      if (c.type === "tool-output-available") raw.toolResults += 1;
      if (c.type === "tool-output-error") raw.toolErrors += 1;
    }
    const requests = [...fake.requests];
    for (const request of requests) {
      if (isSummaryRequest(request.messages)) {
        if (request.status !== 200) raw.summarizerErrors += 1;
        else raw.summaries += 1;
        if (request.finishReason === "length") raw.summariesCut += 1;
        if (request.status === 200 && asksForSections(request)) {
          raw.refillsAsked += 1;
          if (request.finishReason !== "length") raw.refillsWhole += 1;
        }
      } else if (request.status === 400) {
        raw.chatOverflows += 1;
      }
    }
    raw.finalRequest = requests.filter((r) => !isSummaryRequest(r.messages)).at(-1) ?? null;
    if ((turn.index + 1) % PROGRESS_EVERY_TURNS === 0) {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      log(
        `${modelId}: ${turn.index + 1} turns in ${seconds} s; ${raw.summaries} summaries (${raw.summariesCut} cut), ${raw.summarizerErrors} summarizer errors, ${raw.failed.length} failed`,
      );
    }
  }
  raw.outcomes = await outcomesOf(database, chat.chatId);
  raw.seconds = (performance.now() - started) / 1000;
  return raw;
}

/** A summarizer request for some sections only: its prompt asks so in words. */
function asksForSections(request: RecordedRequest): boolean {
  return request.messages.some(
    (m) => m.role === "user" && contentText(m).includes("Write only these sections"),
  );
}
