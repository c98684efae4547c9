import { modelBudget } from "@/lib/chat/budget";
import { serializeMessage } from "@/lib/compaction/serialize";
import { type Database, withDatabase } from "@/lib/db/client";
import { listCompactionEvents } from "@/lib/db/queries/compaction-events";
import { findMessage, loadHistory } from "@/lib/db/queries/messages";
import type { CompactionEvent } from "@/lib/db/schema";
import type { MessageMetadata } from "@/lib/message/stats";
import { COMPACTION_TRACE_TOOL_NAME, rowToUIMessage } from "@/lib/message/ui-message";
import { isSummaryRequest } from "../fixtures/fake-openai/summarizer";
import { countTextTokens } from "../fixtures/fake-openai/tokens";
import type { FakeOpenAI, RecordedRequest, WireMessage } from "../fixtures/fake-openai/types";
import { type BenchChat, type Chunk, openChat, sendBenchTurn } from "./chat-turns";
import {
  contentTokens,
  isSummarizerRequest,
  requestText,
  summarizerSpanText,
  turnsInSpan,
} from "./sim-metrics";
import type { PageServer } from "./sim-pages";
import type { TurnPlan } from "./sim-plan";

/**
 * The `sim` benchmark's turn loop: each planned turn goes through the real POST /api/chat
 * handler, in-process, against the fake server. This module loads Fold: import it only after
 * setting process.env.
 */

const PROGRESS_EVERY = 100;

/** What one simulated turn streamed, sent and stored: for modules that read more than `sim` does. */
export type ObservedTurn = {
  turn: TurnPlan;
  /** The UI message stream's chunks. */
  chunks: readonly Chunk[];
  /** Every request the fake server received during the turn (chat and summarizer). */
  requests: readonly RecordedRequest[];
  /** The stored reply's metadata, or null when nothing was stored. */
  metadata: MessageMetadata | null;
  /** Why the turn failed, or null. */
  problem: string | null;
};

/**
 * Scripts fetch_url calls just in time. A turn that compacts sends the summarizer first, and
 * the fake server hands a scripted reply to whichever request comes next; so the tool call is
 * scripted only when the turn's first chat request (the one ending in the user's message) is
 * on its way. Watches Fold's provider calls through the global fetch, which the AI SDK reads
 * at call time; fetch_url itself uses node:http and is not affected.
 */
export class Director {
  /** The URL the current turn's model should fetch, or null for a plain reply. */
  target: string | null = null;
  private scripted = false;
  private readonly original: typeof fetch;

  constructor(private readonly fake: FakeOpenAI) {
    this.original = globalThis.fetch;
    const completions = `${fake.url}/chat/completions`;
    const wrapped: typeof fetch = (input, init) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      if (url === completions && typeof init?.body === "string") this.observe(init.body);
      return this.original(input, init);
    };
    globalThis.fetch = wrapped;
  }

  startTurn(target: string | null): void {
    this.target = target;
    this.scripted = false;
  }

  private observe(body: string): void {
    if (this.target === null || this.scripted) return;
    const parsed = JSON.parse(body) as { messages?: WireMessage[] };
    const messages = parsed.messages ?? [];
    // The fake server's own test for a summarizer request: the reply it scripts goes elsewhere.
    if (isSummaryRequest(messages) || messages.at(-1)?.role !== "user") return;
    this.scripted = true;
    this.fake.script({ toolCalls: [{ name: "fetch_url", arguments: { url: this.target } }] });
  }

  restore(): void {
    globalThis.fetch = this.original;
  }
}

export type FailedTurn = { turn: number; detail: string };

export type SimRaw = {
  turns: number;
  failed: FailedTurn[];
  /** Every 400 the fake server answered; `context` describes this turn and the one before. */
  overflowRequests: Array<{ turn: number; detail: string; context: string }>;
  events: CompactionEvent[];
  /** Tokens of span text in the accepted summarizer requests. */
  summarizerSpanTokens: number;
  summarizerRequests: number;
  /** Turn numbers whose user message reached the summarizer more than once. */
  resentTurns: number;
  /** Content tokens of everything stored: user, assistant and tool. */
  conversationTokens: number;
  /** Tokens of every stored message as Stage 1 serializes it for the summarizer, once each. */
  serializedOnceTokens: number;
  /** Text of the final turn's first chat request (what the model saw). */
  finalRequestText: string;
  finalPromptTokens: number;
  maxChatPromptTokens: number;
  hardWallTurns: number;
  /** Turns whose first chat request (what Tier 1 sized) was above the trigger… */
  firstStepsOverTrigger: number;
  /** …of which the turn before had a step trimmed in memory (Tier 2 or recovery). */
  overTriggerAfterShrink: number;
  /** …and above the input budget. */
  firstStepsOverBudget: number;
  trigger: number;
  inputBudget: number;
  /** Turns whose stream carried a "trimmed" trace (recovery retried), described. */
  recovered: string[];
  /** Turns where a later step's prompt was smaller than the step before: trimmed in memory. */
  shrunkStepTurns: number;
  toolTurns: number;
  toolOutputChars: number[];
  storedMessages: number;
};

function describeRequest(request: RecordedRequest): string {
  const kind = isSummarizerRequest(request) ? "summarizer" : "chat";
  const last = request.messages.at(-1)?.role ?? "?";
  const maxTokens = request.body.max_completion_tokens ?? request.body.max_tokens;
  return `${kind} ${request.status} prompt=${request.promptTokens}${maxTokens ? `+max ${String(maxTokens)}` : ""} msgs=${request.messages.length} last=${last}`;
}

/** Every compaction trace the turn streamed (Tier 1, and recovery's in-memory trims). */
function traceSummary(chunks: readonly Chunk[]): string | null {
  const starts = chunks.filter(
    (c) => c.type === "tool-input-available" && c.toolName === COMPACTION_TRACE_TOOL_NAME,
  );
  if (starts.length === 0) return null;
  return starts
    .map((start) => {
      const end = chunks.find(
        (c) => c.type === "tool-output-available" && c.toolCallId === start.toolCallId,
      );
      const out = (end?.output ?? {}) as Record<string, unknown>;
      return `trace ${String(out.outcome)}/${String(out.reason)} ${String(out.tokensBefore)}→${String(out.tokensAfter)}${out.note ? ` (${String(out.note)})` : ""}`;
    })
    .join("; ");
}

function isTrimmedTrace(output: unknown): boolean {
  return (
    typeof output === "object" &&
    output !== null &&
    (output as { outcome?: unknown }).outcome === "trimmed"
  );
}

/** The stored reply's usage: what the next turn's projection starts from. */
function statsSummary(metadata: MessageMetadata | null | undefined): string {
  const stats = metadata?.stats;
  if (!stats) return "no stats";
  return `stats contextTokens=${stats.contextTokens} lastStepOutputTokens=${stats.lastStepOutputTokens ?? "-"} steps=${stats.steps} viewVersion=${stats.viewVersion ?? "-"} viewCapTokens=${stats.viewCapTokens ?? "-"}`;
}

function fetchOutputChars(chunks: readonly Chunk[]): number | null {
  const call = chunks.find((c) => c.type === "tool-input-available" && c.toolName === "fetch_url");
  if (!call) return null;
  const result = chunks.find(
    (c) => c.type === "tool-output-available" && c.toolCallId === call.toolCallId,
  );
  const output = result?.output as { text?: string } | undefined;
  return output?.text?.length ?? null;
}

export async function runSimulation(input: {
  database: Database;
  fake: FakeOpenAI;
  pages: PageServer;
  plan: readonly TurnPlan[];
  modelId: string;
  log: (line: string) => void;
  /** Runs before each turn is sent, after the fake server was reset and configured for it. */
  beforeTurn?: (turn: TurnPlan) => void;
  /** Runs after each turn, once its reply is stored and the lease released. */
  afterTurn?: (observed: ObservedTurn) => void;
}): Promise<SimRaw> {
  const { database, fake, pages, plan, modelId, log } = input;
  const chat: BenchChat = await openChat(database, "sim@example.com", modelId);
  const director = new Director(fake);
  // Outside a request Fold would open its process-wide database: scope it to the bench's.
  const { budget } = await withDatabase(database, () => modelBudget(database.db, modelId));
  const raw: SimRaw = {
    turns: 0,
    failed: [],
    overflowRequests: [],
    events: [],
    summarizerSpanTokens: 0,
    summarizerRequests: 0,
    resentTurns: 0,
    conversationTokens: 0,
    serializedOnceTokens: 0,
    finalRequestText: "",
    finalPromptTokens: 0,
    maxChatPromptTokens: 0,
    hardWallTurns: 0,
    recovered: [],
    firstStepsOverTrigger: 0,
    firstStepsOverBudget: 0,
    overTriggerAfterShrink: 0,
    trigger: budget.trigger,
    inputBudget: budget.inputBudget,
    shrunkStepTurns: 0,
    toolTurns: 0,
    toolOutputChars: [],
    storedMessages: 0,
  };
  const summarizedTurns = new Map<number, number>();
  let previousTurn = "";
  let previousShrunk = false;
  const started = performance.now();
  try {
    for (const turn of plan) {
      fake.reset();
      fake.configure({ replyTokens: turn.replyTokens });
      director.startTurn(turn.page ? `${pages.origin}${turn.page.path}` : null);
      input.beforeTurn?.(turn);
      const { chunks, problem: refused } = await sendBenchTurn(chat, turn.text);
      let problem = refused;
      raw.turns += 1;

      const requests = [...fake.requests];
      const replyId = chunks.find((c) => c.type === "start")?.messageId;
      const stored =
        typeof replyId === "string" ? await findMessage(database.db, chat.chatId, replyId) : null;
      if (!problem && !stored) problem = "no stored reply";
      const stats = (stored?.metadata as MessageMetadata | null | undefined)?.stats;
      if (stats?.viewCapTokens != null) raw.hardWallTurns += 1;

      const outputChars = fetchOutputChars(chunks);
      if (turn.page) {
        raw.toolTurns += 1;
        if (outputChars !== null) raw.toolOutputChars.push(outputChars);
      }
      const page = turn.page
        ? `fetch_url ${turn.page.path} (${turn.page.bytes} B ${turn.page.kind}) → ${outputChars ?? "no"} chars of text; `
        : "";
      const trace = traceSummary(chunks);
      const thisTurn = `turn ${turn.index + 1}: ${page}${trace ? `${trace}; ` : ""}requests [${requests.map(describeRequest).join("; ")}]; ${statsSummary(stored?.metadata as MessageMetadata | null | undefined)}`;
      const recovered = chunks.some(
        (c) => c.type === "tool-output-available" && isTrimmedTrace(c.output),
      );
      const accepted = requests.filter((r) => !isSummarizerRequest(r) && r.status === 200);
      const firstStep = requests.find((r) => !isSummarizerRequest(r));
      if (firstStep && firstStep.promptTokens > budget.trigger) {
        raw.firstStepsOverTrigger += 1;
        if (previousShrunk) raw.overTriggerAfterShrink += 1;
        if (firstStep.promptTokens > budget.inputBudget) raw.firstStepsOverBudget += 1;
      }
      const shrunk = accepted.some(
        (r, i) => i > 0 && r.promptTokens < (accepted[i - 1]?.promptTokens ?? 0),
      );
      if (shrunk) raw.shrunkStepTurns += 1;
      if (recovered) raw.recovered.push(`${thisTurn}\n    previous ${previousTurn}`);
      for (const request of requests) {
        if (request.status === 400) {
          raw.overflowRequests.push({
            turn: turn.index + 1,
            detail: describeRequest(request),
            context: `${thisTurn}\n    previous ${previousTurn}`,
          });
        }
        if (isSummarizerRequest(request)) {
          if (request.status !== 200) continue;
          raw.summarizerRequests += 1;
          const span = summarizerSpanText(request);
          raw.summarizerSpanTokens += countTextTokens(span);
          for (const n of turnsInSpan(span))
            summarizedTurns.set(n, (summarizedTurns.get(n) ?? 0) + 1);
        } else if (request.status === 200) {
          raw.maxChatPromptTokens = Math.max(raw.maxChatPromptTokens, request.promptTokens);
        }
      }
      input.afterTurn?.({
        turn,
        chunks,
        requests,
        metadata: (stored?.metadata as MessageMetadata | null | undefined) ?? null,
        problem,
      });
      if (problem) {
        raw.failed.push({
          turn: turn.index + 1,
          detail: `${problem}; ${thisTurn}\n    previous ${previousTurn}`,
        });
      }
      previousTurn = thisTurn;
      previousShrunk = shrunk || recovered;
      if (turn.index === plan.length - 1) {
        // What the model answered from: the accepted request (a recovered turn retries).
        const first =
          requests.find((r) => !isSummarizerRequest(r) && r.status === 200) ??
          requests.find((r) => !isSummarizerRequest(r));
        if (first) {
          raw.finalRequestText = requestText(first);
          raw.finalPromptTokens = first.promptTokens;
        }
      }
      if ((turn.index + 1) % PROGRESS_EVERY === 0) {
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        log(
          `sim: ${turn.index + 1} turns in ${seconds} s; ${raw.summarizerRequests} summarizer calls, ${raw.failed.length} failed, ${raw.overflowRequests.length} overflows`,
        );
      }
    }
  } finally {
    director.restore();
  }
  raw.resentTurns = [...summarizedTurns.values()].filter((count) => count > 1).length;
  raw.events = await listCompactionEvents(database.db, chat.chatId);
  const history = (await loadHistory(database.db, chat.chatId)).map(rowToUIMessage);
  raw.storedMessages = history.length;
  for (const message of history) {
    raw.conversationTokens += contentTokens(message);
    raw.serializedOnceTokens += countTextTokens(serializeMessage(message));
  }
  return raw;
}
