import type { Budget } from "@/lib/context/budget";
import type { TokenEstimator } from "@/lib/context/tokens";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import {
  buildView,
  type CompactionState,
  type ModelView,
  splitAtWatermark,
  stripTrace,
  withHardWall,
} from "./view";

/**
 * Tier 1 (DESIGN §8), pure: given the stored history and the durable state,
 * decide the model view for this turn, and — when the projection crosses the
 * trigger, the state is dirty, or the user asked — fold everything between
 * the old watermark and the keep boundary into the summary. Writes nothing:
 * the caller commits the result through the CAS writer.
 */

export type SummarizePort = (request: {
  previousSummary: string | null;
  span: FoldUIMessage[];
  summaryBudget: number;
  signal?: AbortSignal;
}) => Promise<{ summary: string; model: string; inputTokens: number }>;

export type FallbackPort = (request: {
  previousSummary: string | null;
  span: FoldUIMessage[];
  budgetTokens: number;
}) => string;

export type Tier1Input = {
  history: readonly FoldUIMessage[];
  state: CompactionState;
  budget: Budget;
  /** Raw tokens of the system prompt and tool schemas. */
  overheadTokens: number;
  /** Calibrated ratio of real to estimated tokens for this model. */
  ratio: number;
  modelId: string;
  estimator: TokenEstimator;
  keepRecentToolResults: number;
  /** Compact now: summarize everything but the keep window, whatever the projection says. */
  force?: boolean;
  summarize: SummarizePort;
  fallback: FallbackPort;
  signal?: AbortSignal;
  now?: () => number;
  /** Called right before the summarizer runs (the trace shows "Compacting context…"). */
  onSummarizeStart?: (info: { tokensBefore: number; messages: number }) => void;
};

export type CompactionDraft = {
  outcome: "summarized" | "fallback" | "skipped";
  tokensBefore: number;
  tokensAfter: number;
  messagesSummarized: number;
  watermarkFrom: string | null;
  watermarkTo: string | null;
  summary: string | null;
  summarizerModel: string | null;
  latencyMs: number;
  /** Why it fell back, or why it could not reach the target. */
  note: string | null;
};

export type Tier1Result =
  | { kind: "noop"; view: ModelView; projectedTokens: number }
  | {
      kind: "compacted";
      view: ModelView;
      projectedTokens: number;
      next: { summary: string; watermark: string };
      draft: CompactionDraft;
    }
  | { kind: "skipped"; view: ModelView; projectedTokens: number; draft: CompactionDraft };

/** Raw room for messages: what the input budget leaves after the overhead, in uncalibrated tokens. */
function messageRoom(input: ProjectionInput): number {
  return Math.max(0, Math.floor(input.budget.inputBudget / input.ratio) - input.overheadTokens);
}

/** The last reply sent within this compaction version, if any: its real usage describes this view. */
function lastReplyOfVersion(input: ProjectionInput, after: readonly FoldUIMessage[]) {
  for (let i = after.length - 1; i >= 0; i--) {
    const stats = after[i]?.metadata?.stats;
    if (!stats) continue;
    return stats.viewVersion === input.state.version ? { index: i, stats } : null;
  }
  return null;
}

/**
 * Tokens Stage 0 saves now on results the last request still sent whole: the
 * results its own turn produced (added after Stage 0 ran), and the ones that
 * were still among the newest before that turn.
 */
function stage0Savings(input: ProjectionInput, view: ModelView, lastIndex: number): number {
  const offset = view.messages.length - view.after.length;
  let olderSeen = 0;
  let savings = 0;
  for (let i = lastIndex; i >= 0; i--) {
    const original = view.after[i];
    const edited = view.messages[i + offset];
    if (!original || !edited) break;
    const ownTurn = i === lastIndex;
    if (!ownTurn && olderSeen >= input.keepRecentToolResults) break;
    for (let j = original.parts.length - 1; j >= 0; j--) {
      const part = original.parts[j];
      if (!part || !("toolCallId" in part) || part.state !== "output-available") continue;
      const sentWhole = ownTurn || olderSeen < input.keepRecentToolResults;
      if (!ownTurn) olderSeen++;
      const now = edited.parts[j];
      if (sentWhole && now && "output" in now && now.output !== part.output) {
        const before =
          typeof part.output === "string" ? part.output : (JSON.stringify(part.output) ?? "");
        savings +=
          input.estimator.countText(before) - input.estimator.countText(String(now.output));
      }
    }
  }
  return Math.max(0, savings);
}

/**
 * The next request's size. Real usage first: when the last reply was sent
 * this view's compaction version by this model, its provider count (less what
 * Stage 0 has replaced since) plus an estimate of what came after; otherwise
 * an estimate of the view.
 */
export function projectTokens(input: ProjectionInput, view: ModelView): number {
  const { ratio, estimator } = input;
  const last = lastReplyOfVersion(input, view.after);
  // Real usage describes this view only if no request of that turn was trimmed in memory.
  if (last && last.stats.model === input.modelId && !last.stats.viewTrimmed) {
    const since = view.after.slice(last.index + 1);
    return (
      last.stats.contextTokens +
      (last.stats.lastStepOutputTokens ?? last.stats.outputTokens) -
      Math.floor(stage0Savings(input, view, last.index) * ratio) +
      estimator.estimateUIMessages(since, { ratio })
    );
  }
  return Math.ceil((input.overheadTokens + estimator.estimateUIMessages(view.messages)) * ratio);
}

/**
 * The keep boundary: the earliest user-turn start whose suffix fits in
 * `keepRecent`, and never later than the latest user message. Message
 * boundaries never split a tool call from its result: both live in one part.
 */
export function keepBoundary(
  after: readonly FoldUIMessage[],
  keepRecentRaw: number,
  estimator: TokenEstimator,
): number {
  const lastUser = after.findLastIndex((m) => m.role === "user");
  if (lastUser < 0) return after.length;
  let boundary = lastUser;
  let suffix = estimator.estimateUIMessages(after.slice(lastUser));
  for (let i = lastUser - 1; i >= 0; i--) {
    suffix += estimator.estimateUIMessages([after[i] as FoldUIMessage]);
    if (suffix > keepRecentRaw) break;
    if (after[i]?.role === "user") boundary = i;
  }
  return boundary;
}

function splitAfter(input: ProjectionInput): FoldUIMessage[] {
  return splitAtWatermark(input.history, input.state.summary ? input.state.watermark : null).after;
}

export type ProjectionInput = Omit<
  Tier1Input,
  "summarize" | "fallback" | "force" | "signal" | "now" | "onSummarizeStart"
>;

/**
 * The view the next turn would send and its projected size — the first half
 * of Tier 1, also what the context ring shows. Cheap: real usage plus the
 * messages since, with no hard-wall estimate unless an earlier turn needed one.
 */
export function projectNextTurn(input: ProjectionInput) {
  const rules = {
    bulkyToolTokens: input.budget.bulkyToolTokens,
    keepRecentToolResults: input.keepRecentToolResults,
  };
  const limitTokens = messageRoom(input);
  // A hard-wall cap an earlier turn of this version applied stays until the next compaction.
  const priorCapTokens = lastReplyOfVersion(input, splitAfter(input))?.stats.viewCapTokens ?? null;
  const view = buildView({
    history: input.history,
    state: input.state,
    rules,
    limitTokens,
    estimator: input.estimator,
    knownToFit: true,
    priorCapTokens,
  });
  return { view, projectedTokens: projectTokens(input, view), rules, limitTokens, priorCapTokens };
}

export async function runTier1(input: Tier1Input): Promise<Tier1Result> {
  const now = input.now ?? Date.now;
  const projected = projectNextTurn(input);
  const { rules, limitTokens, priorCapTokens } = projected;
  const tokensBefore = projected.projectedTokens;
  const dirty = input.state.dirty || projected.view.watermarkMissing;
  const underTrigger = tokensBefore < input.budget.trigger;

  // Fast path: under the trigger, nothing to repair, nobody asked.
  if (underTrigger && !dirty && !input.force && priorCapTokens === null) {
    return { kind: "noop", view: projected.view, projectedTokens: tokensBefore };
  }

  // The projection skipped the hard-wall check unless an earlier turn's cap applied it.
  const walled =
    priorCapTokens === null
      ? withHardWall(projected.view, limitTokens, input.estimator)
      : projected.view;
  if (!dirty && !input.force && underTrigger) {
    // Walled but under the trigger: keep the wall, nothing to fold.
    return { kind: "noop", view: walled, projectedTokens: tokensBefore };
  }

  const startedAt = now();
  const span = spanToFold(input, walled);
  const watermarkFrom = walled.summary ? input.state.watermark : null;
  const watermarkTo = span[span.length - 1]?.id;
  if (!watermarkTo) {
    // Nothing between the watermark and the keep window: a dirty flag with nothing to
    // fold is simply settled; the hard wall already applies to this view.
    return {
      kind: "skipped",
      view: walled,
      projectedTokens: tokensBefore,
      draft: {
        outcome: "skipped",
        tokensBefore,
        tokensAfter: tokensBefore,
        messagesSummarized: 0,
        watermarkFrom,
        watermarkTo: watermarkFrom,
        summary: walled.summary,
        summarizerModel: null,
        latencyMs: now() - startedAt,
        note: walled.fits
          ? "nothing to fold: the recent turns are all that is left"
          : "the latest message alone does not fit the context window",
      },
    };
  }

  input.onSummarizeStart?.({ tokensBefore, messages: span.length });
  const folded = await foldIntoSummary(input, walled.summary, span);
  const next = { summary: folded.summary, watermark: watermarkTo };
  const view = buildView({
    history: input.history,
    state: next,
    rules,
    limitTokens,
    estimator: input.estimator,
  });
  const tokensAfter = Math.ceil(
    (input.overheadTokens + input.estimator.estimateUIMessages(view.messages)) * input.ratio,
  );
  const missedTarget =
    tokensAfter > input.budget.target
      ? `could not reach the target (${tokensAfter} > ${input.budget.target} tokens): the recent turns kept verbatim are large`
      : null;
  return {
    kind: "compacted",
    view,
    projectedTokens: tokensAfter,
    next,
    draft: {
      outcome: folded.outcome,
      tokensBefore,
      tokensAfter,
      messagesSummarized: span.length,
      watermarkFrom,
      watermarkTo,
      summary: folded.summary,
      summarizerModel: folded.summarizerModel,
      latencyMs: now() - startedAt,
      note: [folded.note, missedTarget].filter(Boolean).join("; ") || null,
    },
  };
}

/**
 * What to fold: everything between the old watermark and the keep boundary.
 * The keep window must leave room for the summary and the overhead under the
 * target, or every compaction lands above it and fires again next turn (DESIGN §7).
 */
function spanToFold(input: Tier1Input, view: ModelView): FoldUIMessage[] {
  const { budget, ratio } = input;
  const keepRoom = Math.min(
    budget.keepRecent,
    budget.target - budget.summaryBudget - Math.ceil(input.overheadTokens * ratio),
  );
  const keepRaw = Math.max(0, Math.floor(keepRoom / ratio));
  return view.after.slice(0, keepBoundary(view.after, keepRaw, input.estimator));
}

/** Stage 2: the summarizer folds the span into the summary; if every model fails, the digest does. */
async function foldIntoSummary(
  input: Tier1Input,
  previousSummary: string | null,
  span: readonly FoldUIMessage[],
): Promise<{
  summary: string;
  outcome: "summarized" | "fallback";
  summarizerModel: string | null;
  note: string | null;
}> {
  const summaryBudget = input.budget.summaryBudget;
  try {
    const result = await input.summarize({
      previousSummary,
      span: stripTrace(span),
      summaryBudget,
      signal: input.signal,
    });
    return {
      summary: result.summary,
      outcome: "summarized",
      summarizerModel: result.model,
      note: null,
    };
  } catch (error) {
    if (input.signal?.aborted) throw error;
    const summary = input.fallback({
      previousSummary,
      span: stripTrace(span),
      budgetTokens: summaryBudget,
    });
    const reason = error instanceof Error ? error.message : String(error);
    return {
      summary,
      outcome: "fallback",
      summarizerModel: null,
      note: `summarizer unavailable: ${reason}`,
    };
  }
}
