import type { FallbackPort, SummarizePort, Tier1Input, Tier1Result } from "@/lib/compaction/tier1";
import { type CompactionState, SUMMARY_MESSAGE_ID } from "@/lib/compaction/view";
import { type Budget, type BudgetRatios, computeBudget } from "@/lib/context/budget";
import { createEstimator, type TokenEstimator } from "@/lib/context/tokens";
import { COMPACTION_DEFAULTS } from "@/lib/env";
import type { MessageStats } from "@/lib/message/stats";
import type { FoldUIMessage } from "@/lib/message/ui-message";

/**
 * Builders for Tier 1 tests: histories of known token sizes, a recording
 * summarizer, and a tiny turn simulator that does what the turn runner does
 * around Tier 1 (commit the state, store the reply with its real usage).
 */

export const MODEL_ID = "test:chat-model";
export const SUMMARIZER_MODEL = "test:summarizer";
export const OVERHEAD_TOKENS = 300;
export const RATIO = 1;
export const KEEP_RECENT_TOOL_RESULTS = COMPACTION_DEFAULTS.keepRecentToolResults;
export const DEFAULT_RATIOS: BudgetRatios = { ...COMPACTION_DEFAULTS };

/** 8,192-token window, unknown output limit: inputBudget 5,735, trigger 4,588, target 2,867. */
export const BUDGET_8K: Budget = computeBudget(
  { contextWindow: 8192, maxOutputTokens: null },
  DEFAULT_RATIOS,
);

export const EMPTY_STATE: CompactionState = {
  summary: null,
  watermark: null,
  dirty: false,
  version: 0,
};

/** Single-token o200k words: `filler(n)` is exactly n tokens. */
const WORDS = [
  "the",
  "data",
  "value",
  "file",
  "result",
  "line",
  "code",
  "test",
  "model",
  "note",
  "alpha",
  "river",
  "stone",
  "green",
  "table",
];

export function filler(tokens: number, seed = 0): string {
  return Array.from({ length: tokens }, (_, i) => WORDS[(i * 7 + seed) % WORDS.length]).join(" ");
}

export type ToolSpec = {
  name: string;
  callId: string;
  input: Record<string, unknown>;
  output: unknown;
};

type Part = FoldUIMessage["parts"][number];

export function toolPart(spec: ToolSpec): Part {
  return {
    type: `tool-${spec.name}`,
    toolCallId: spec.callId,
    state: "output-available",
    input: spec.input,
    output: spec.output,
  };
}

export function userMessage(id: string, text: string): FoldUIMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

export function assistantMessage(
  id: string,
  content: { tools?: ToolSpec[]; text?: string; stats?: MessageStats },
): FoldUIMessage {
  const parts: Part[] = [{ type: "step-start" }];
  for (const tool of content.tools ?? []) parts.push(toolPart(tool));
  if (content.tools?.length) parts.push({ type: "step-start" });
  if (content.text !== undefined) parts.push({ type: "text", text: content.text });
  return {
    id,
    role: "assistant",
    parts,
    metadata: content.stats ? { stats: content.stats } : undefined,
  };
}

export function statsFor(input: {
  contextTokens: number;
  lastStepOutputTokens: number;
  viewVersion: number;
  model?: string;
}): MessageStats {
  return {
    model: input.model ?? MODEL_ID,
    inputTokens: input.contextTokens,
    outputTokens: input.lastStepOutputTokens,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    contextTokens: input.contextTokens,
    lastStepOutputTokens: input.lastStepOutputTokens,
    viewVersion: input.viewVersion,
    steps: 1,
    startedAt: 0,
    firstTokenAt: 1,
    finishedAt: 2,
    finishReason: "stop",
  };
}

export type ExchangeSpec = {
  userTokens: number;
  /** Output sizes in tokens of the assistant's tool calls, oldest first. */
  toolTokens?: number[];
  textTokens: number;
};

/** One user message and the assistant's answer, ids `u<n>` / `a<n>`, tool call ids `c<n>-<k>`. */
export function exchange(n: number, spec: ExchangeSpec): [FoldUIMessage, FoldUIMessage] {
  const tools = (spec.toolTokens ?? []).map(
    (tokens, k): ToolSpec => ({
      name: k % 2 === 0 ? "fetch_url" : "run_query",
      callId: `c${n}-${k}`,
      input: { url: `https://example.com/doc/${n}/${k}` },
      output: `output ${n}.${k}: ${filler(tokens, n + k)}`,
    }),
  );
  return [
    userMessage(`u${n}`, `question ${n}: ${filler(spec.userTokens, n)}`),
    assistantMessage(`a${n}`, { tools, text: `answer ${n}: ${filler(spec.textTokens, n + 1)}` }),
  ];
}

export const SUMMARY_HEADINGS = [
  "## Goal & open requests",
  "## Constraints & preferences",
  "## Current state & next step",
  "## Decisions & facts",
  "## Artifacts & references",
  "## Errors & fixes",
];

export function summaryText(label: string): string {
  return SUMMARY_HEADINGS.map((heading) => `${heading}\n${label}: ${filler(6)}`).join("\n");
}

export type SummarizeCall = Parameters<SummarizePort>[0];

/** A summarize port that records each request and answers with a short six-heading summary. */
export function recordingSummarizer(options: { fail?: Error } = {}) {
  const calls: SummarizeCall[] = [];
  const port: SummarizePort = async (request) => {
    calls.push({ ...request, span: [...request.span] });
    if (options.fail) throw options.fail;
    return {
      summary: summaryText(`summary ${calls.length}`),
      model: SUMMARIZER_MODEL,
      inputTokens: 100,
    };
  };
  return { calls, port };
}

export const FALLBACK_DIGEST = summaryText("fallback digest");

export function recordingFallback() {
  const calls: Parameters<FallbackPort>[0][] = [];
  const port: FallbackPort = (request) => {
    calls.push(request);
    return FALLBACK_DIGEST;
  };
  return { calls, port };
}

/** Everything a test needs around `runTier1`: a fresh estimator and recording ports. */
export function tier1Harness(options: { budget?: Budget; summarizerFails?: Error } = {}) {
  const estimator = createEstimator();
  const summarizer = recordingSummarizer({ fail: options.summarizerFails });
  const fallback = recordingFallback();
  const budget = options.budget ?? BUDGET_8K;
  const input = (
    history: readonly FoldUIMessage[],
    state: CompactionState,
    extra: Partial<Tier1Input> = {},
  ): Tier1Input => ({
    history,
    state,
    budget,
    overheadTokens: OVERHEAD_TOKENS,
    ratio: RATIO,
    modelId: MODEL_ID,
    estimator,
    keepRecentToolResults: KEEP_RECENT_TOOL_RESULTS,
    ledgerShare: COMPACTION_DEFAULTS.ledgerShare,
    summarize: summarizer.port,
    fallback: fallback.port,
    now: () => 0,
    ...extra,
  });
  return { estimator, summarizer, fallback, budget, input };
}

/** What the caller commits after Tier 1: a new summary bumps the version; a skip settles dirty. */
export function nextState(state: CompactionState, result: Tier1Result): CompactionState {
  if (result.kind === "compacted") {
    return { ...result.next, dirty: false, version: state.version + 1 };
  }
  return { ...state, dirty: false };
}

/** Tokens the provider would report for the view: overhead plus the messages, calibrated. */
export function viewTokens(
  view: { messages: readonly FoldUIMessage[] },
  estimator: TokenEstimator,
): number {
  return Math.ceil((OVERHEAD_TOKENS + estimator.estimateUIMessages(view.messages)) * RATIO);
}

/**
 * The assistant reply to a turn whose request was `view`, with real usage as
 * the provider would report it: the last step's input is the view plus the
 * reply's own tool calls and results; its output is the final text.
 */
export function replyWithUsage(
  n: number,
  spec: Omit<ExchangeSpec, "userTokens">,
  sent: { messages: readonly FoldUIMessage[] },
  viewVersion: number,
  estimator: TokenEstimator,
): FoldUIMessage {
  const [, draft] = exchange(n, { ...spec, userTokens: 0 });
  const textPart = draft.parts.findLast((p) => p.type === "text");
  const text = textPart?.type === "text" ? textPart.text : "";
  const toolsOnly: FoldUIMessage = {
    ...draft,
    parts: draft.parts.filter((p) => p.type !== "text"),
  };
  const stepInput = spec.toolTokens?.length
    ? viewTokens({ messages: [...sent.messages, toolsOnly] }, estimator)
    : viewTokens(sent, estimator);
  return {
    ...draft,
    metadata: {
      stats: statsFor({
        contextTokens: stepInput,
        lastStepOutputTokens: estimator.countText(text),
        viewVersion,
      }),
    },
  };
}

export function ids(messages: readonly FoldUIMessage[]): string[] {
  return messages.map((m) => m.id);
}

/** The view's stored messages: everything but the summary message. */
export function keptMessages(messages: readonly FoldUIMessage[]): FoldUIMessage[] {
  return messages.filter((m) => m.id !== SUMMARY_MESSAGE_ID);
}

export function isPlaceholderOutput(output: unknown): boolean {
  return typeof output === "string" && output.startsWith("[tool result for ");
}

/** Character length of every stored text and tool output in a view, keyed by message id and part index. */
export function partLengths(messages: readonly FoldUIMessage[]): Map<string, number> {
  const lengths = new Map<string, number>();
  for (const message of keptMessages(messages)) {
    message.parts.forEach((part, index) => {
      const key = `${message.id}#${index}`;
      if (part.type === "text") lengths.set(key, part.text.length);
      else if ("output" in part && part.state === "output-available") {
        const output = typeof part.output === "string" ? part.output : JSON.stringify(part.output);
        lengths.set(key, output?.length ?? 0);
      }
    });
  }
  return lengths;
}
