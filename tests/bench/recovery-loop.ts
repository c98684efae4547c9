import { randomUUID } from "node:crypto";
import type { PrepareStepFunction } from "ai";
import * as chatApi from "@/app/api/chat/route";
import { getLanguageModel } from "@/lib/ai/providers";
import { chatRequestFrame } from "@/lib/ai/request-frame";
import type { BuiltinTools } from "@/lib/ai/tools";
import { type ModelBudget, modelBudget } from "@/lib/chat/budget";
import type { RecoveryEvent } from "@/lib/compaction/recovery";
import { createTier2 } from "@/lib/compaction/tier2";
import { createEstimator } from "@/lib/context/tokens";
import { type Database, withDatabase } from "@/lib/db/client";
import { findMessage } from "@/lib/db/queries/messages";
import { env } from "@/lib/env";
import type { MessageMetadata } from "@/lib/message/stats";
import { COMPACTION_TRACE_TOOL_NAME } from "@/lib/message/ui-message";
import { streamModelCall } from "@/lib/turn/model-call";
import { contentText } from "../fixtures/fake-openai/request";
import { countTextTokens } from "../fixtures/fake-openai/tokens";
import type { FakeOpenAI, RecordedRequest, ScriptedReply } from "../fixtures/fake-openai/types";
import { isTurnActive } from "../helpers/db";
import { call } from "../helpers/http";
import { eventually, readChunks } from "../helpers/ui-stream";
import { openChat } from "./chat-turns";
import { isSummarizerRequest } from "./sim-metrics";

/**
 * The `recovery` benchmark's tool loops: one user message, a model scripted to call fetch_url
 * 49 times (each page ~20 kB of text) and then answer, against an 8,192-token window.
 * - through the real turn path (POST /api/chat in-process), which caps the loop at its own
 *   step limit;
 * - through the turn's own model-call wiring (`streamModelCall`: Tier 2 and the recovery
 *   middleware), with the loop allowed all 50 steps;
 * and the CPU the Tier 2 hook costs per step, replayed on that 50-step loop's recorded inputs.
 * This module loads Fold: import it only after setting process.env.
 */

const ANSWER = "All the pages agree: the ledger is in the harbor archive.";
const userText = (fetches: number) =>
  `Read the ${fetches} intranet pages one by one with fetch_url and tell me what they agree on.`;
/** Replays of the recorded hook inputs: warm-up (JIT) and timed. */
const REPLAY_WARMUP = 5;
const REPLAY_TIMED = 31;
/** The metric Tier 2 reports each trim with; its `stalled` field says the turn stops trimming. */
const TIER2_METRIC = "compaction.tier2";

type Tools = BuiltinTools;
type StepInput = Parameters<PrepareStepFunction<Tools>>[0];

export function loopScript(urls: readonly string[]): ScriptedReply[] {
  return [
    ...urls.map((url) => ({ toolCalls: [{ name: "fetch_url", arguments: { url } }] })),
    { text: ANSWER },
  ];
}

export type LoopRequests = {
  chat: RecordedRequest[];
  accepted: RecordedRequest[];
  overflows: number;
  peakAcceptedPrompt: number;
};

/** Tokens (fake server's count) of the newest tool message of each request that has one. */
export function newestResultTokens(requests: readonly RecordedRequest[]): number[] {
  return requests.flatMap((r) => {
    const newest = r.messages.findLast((m) => m.role === "tool");
    return newest ? [countTextTokens(contentText(newest))] : [];
  });
}

function loopRequests(requests: readonly RecordedRequest[]): LoopRequests {
  const chat = requests.filter((r) => !isSummarizerRequest(r));
  const accepted = chat.filter((r) => r.status === 200);
  return {
    chat,
    accepted,
    overflows: chat.filter((r) => r.status === 400).length,
    peakAcceptedPrompt: Math.max(0, ...accepted.map((r) => r.promptTokens)),
  };
}

export type RouteLoop = {
  completed: boolean;
  answered: boolean;
  /** Model calls of the stored reply. */
  steps: number;
  fetches: number;
  finishReason: string | null;
  error: string | null;
  requests: LoopRequests;
  trimmedTraces: number;
  /** Per accepted request after the first: tokens of the newest tool result as the model got it. */
  newestResultTokens: number[];
};

/** The tool loop through POST /api/chat: what a user's turn actually does. */
export async function runRouteLoop(input: {
  database: Database;
  fake: FakeOpenAI;
  urls: readonly string[];
  modelId: string;
}): Promise<RouteLoop> {
  const { database, fake, urls, modelId } = input;
  const chat = await openChat(database, "toolloop@example.com", modelId);
  fake.reset();
  fake.script(...loopScript(urls));
  const response = await call(database, chatApi.POST, {
    path: "/api/chat",
    method: "POST",
    body: {
      trigger: "submit-message",
      chatId: chat.chatId,
      modelId,
      message: {
        id: `u-${randomUUID()}`,
        role: "user",
        parts: [{ type: "text", text: userText(urls.length) }],
      },
    },
    browser: chat.browser,
  });
  if (response.status !== 200) {
    throw new Error(`POST /api/chat answered ${response.status}: ${await response.text()}`);
  }
  const chunks = await readChunks(response);
  await eventually(async () => !(await isTurnActive(database.db, chat.chatId)), 60_000);
  const requests = loopRequests(fake.requests);
  fake.reset();

  const errorChunk = chunks.find((c) => c.type === "error");
  const replyId = chunks.find((c) => c.type === "start")?.messageId;
  const stored =
    typeof replyId === "string" ? await findMessage(database.db, chat.chatId, replyId) : null;
  const stats = (stored?.metadata as MessageMetadata | null | undefined)?.stats;
  const text = chunks
    .filter((c) => c.type === "text-delta")
    .map((c) => String(c.delta))
    .join("");
  const traceIds = new Set(
    chunks
      .filter((c) => c.type === "tool-input-available" && c.toolName === COMPACTION_TRACE_TOOL_NAME)
      .map((c) => c.toolCallId),
  );
  return {
    completed: stored !== null && !errorChunk,
    answered: text === ANSWER,
    steps: stats?.steps ?? 0,
    fetches: chunks.filter((c) => c.type === "tool-output-available" && !traceIds.has(c.toolCallId))
      .length,
    finishReason: stats?.finishReason ?? null,
    error: errorChunk ? String(errorChunk.errorText) : null,
    requests,
    trimmedTraces: chunks.filter(
      (c) =>
        c.type === "tool-output-available" &&
        traceIds.has(c.toolCallId) &&
        (c.output as { outcome?: unknown } | undefined)?.outcome === "trimmed",
    ).length,
    newestResultTokens: newestResultTokens(requests.accepted),
  };
}

export type UncappedLoop = {
  steps: number;
  answered: boolean;
  finishReason: string | null;
  error: string | null;
  requests: LoopRequests;
  recoveries: RecoveryEvent[];
  /** prepareStep calls where Tier 2 trimmed. */
  trims: number;
  /** The hook's inputs, step by step, for replaying it. */
  records: StepInput[];
  /** CPU ms of the hook inside the run (shared, warm estimator). */
  inRunCpuMs: number[];
  /** What the loop's Tier 2 was built from: the chat model's budget and ratio, the frame's overhead. */
  model: ModelBudget;
  overheadTokens: number;
  keepRecentToolResults: number;
};

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/**
 * The same loop with no step cap, through the turn's own model-call wiring (`streamModelCall`:
 * the recovery middleware around the model, Tier 2 as prepareStep) with the budget and request
 * frame a turn resolves, allowed one step per page plus the answer. The Tier 2 hook is timed
 * and its inputs recorded through the `observePrepareStep` seam.
 */
export async function runUncappedLoop(input: {
  database: Database;
  fake: FakeOpenAI;
  urls: readonly string[];
  modelId: string;
}): Promise<UncappedLoop> {
  const { database, fake, urls, modelId } = input;
  // Outside a request Fold would open its process-wide database: scope it to the bench's.
  const [frame, model] = await withDatabase(database, () =>
    Promise.all([chatRequestFrame(new Date()), modelBudget(database.db, modelId)]),
  );
  const { keepRecentToolResults } = env().compaction;
  const recoveries: RecoveryEvent[] = [];
  let trims = 0;
  const records: StepInput[] = [];
  const inRunCpuMs: number[] = [];
  const observe = (hook: PrepareStepFunction<Tools>): PrepareStepFunction<Tools> => {
    return (options) => {
      records.push({ ...options, steps: [...options.steps], messages: [...options.messages] });
      const start = process.cpuUsage();
      const prepared = hook(options);
      inRunCpuMs.push(cpuMsSince(start));
      return prepared;
    };
  };

  fake.reset();
  fake.script(...loopScript(urls));
  let error: string | null = null;
  let steps = 0;
  let text = "";
  let finishReason: string | null = null;
  await withDatabase(database, async () => {
    const result = streamModelCall({
      model: getLanguageModel(modelId),
      budget: model,
      instructions: frame.instructions,
      tools: frame.tools,
      overheadTokens: frame.overheadTokens,
      toolOverheadTokens: frame.toolOverheadTokens,
      messages: [{ role: "user", content: userText(urls.length) }],
      maxSteps: urls.length + 1,
      proactive: true,
      keepRecentToolResults,
      onRecovery: (event) => {
        recoveries.push(event);
      },
      onTrim: () => {
        trims += 1;
      },
      observePrepareStep: observe,
    });
    try {
      for await (const part of result.stream) {
        if (part.type === "error") error ??= String(part.error);
      }
      steps = (await result.steps).length;
      text = await result.text;
      finishReason = await result.finishReason;
    } catch (caught) {
      error ??= caught instanceof Error ? caught.message : String(caught);
    }
  });
  const requests = loopRequests(fake.requests);
  fake.reset();
  return {
    steps,
    answered: text === ANSWER,
    finishReason,
    error,
    requests,
    recoveries,
    trims,
    records,
    inRunCpuMs,
    model,
    overheadTokens: frame.overheadTokens,
    keepRecentToolResults,
  };
}

export type HookCost = {
  /** Mean CPU ms per prepareStep call, over every step of the loop. */
  perStepMs: number;
  /** Mean over the steps after the first that stayed under the trigger (no trim). */
  underTriggerMs: number;
  /** Mean over the steps where it trimmed. */
  trimmingMs: number;
  underTriggerSteps: number;
  trimmingSteps: number;
  /** Steps after a stalled trim, where the hook returns at once. */
  stalledSteps: number;
  replays: number;
};

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const meanOf = (values: readonly number[]) =>
  values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;

/**
 * Replays the hook on the recorded step inputs: each replay a fresh hook, built from the loop's
 * own budget, ratio, overhead and keep-recent count, and a fresh (cold) estimator, as a turn
 * would meet each new tool result for the first time. The recorded inputs already carry the
 * real run's trims forward, so every replay makes the same choices. Reports the median
 * replay's means.
 */
export function replayHookCost(loop: UncappedLoop): HookCost {
  const perReplay: Array<{ all: number; under: number; trimming: number }> = [];
  let counts = { under: 0, trimming: 0, stalled: 0 };
  for (let replay = 0; replay < REPLAY_WARMUP + REPLAY_TIMED; replay++) {
    let stalled = false;
    let trimmedNow = false;
    const hook = createTier2<Tools>({
      budget: loop.model.budget,
      ratio: loop.model.ratio,
      overheadTokens: loop.overheadTokens,
      keepRecentToolResults: loop.keepRecentToolResults,
      estimator: createEstimator(),
      onTrim: () => {
        trimmedNow = true;
      },
      // Tier 2 says itself when a trim saved too little to be tried again this turn.
      onMetric: (name, fields) => {
        if (name === TIER2_METRIC && fields.stalled === true) stalled = true;
      },
    });
    const all: number[] = [];
    const under: number[] = [];
    const trimming: number[] = [];
    const replayCounts = { under: 0, trimming: 0, stalled: 0 };
    for (const record of loop.records) {
      const wasStalled = stalled;
      trimmedNow = false;
      const start = process.cpuUsage();
      hook(record);
      const ms = cpuMsSince(start);
      all.push(ms);
      if (trimmedNow) {
        trimming.push(ms);
        replayCounts.trimming += 1;
      } else if (wasStalled) replayCounts.stalled += 1;
      else if (record.stepNumber > 0) {
        under.push(ms);
        replayCounts.under += 1;
      }
    }
    if (replay >= REPLAY_WARMUP) {
      perReplay.push({ all: meanOf(all), under: meanOf(under), trimming: meanOf(trimming) });
    }
    counts = replayCounts;
  }
  return {
    perStepMs: median(perReplay.map((r) => r.all)),
    underTriggerMs: median(perReplay.map((r) => r.under)),
    trimmingMs: median(perReplay.map((r) => r.trimming)),
    underTriggerSteps: counts.under,
    trimmingSteps: counts.trimming,
    stalledSteps: counts.stalled,
    replays: REPLAY_TIMED,
  };
}
