import type { FinishReason, LanguageModelUsage } from "ai";
import { z } from "zod";

/**
 * Per-message stats (DESIGN §11): one builder feeds both the `finish` chunk the
 * browser sees and the metadata the database stores, so they cannot drift.
 */

export const messageStatsSchema = z.object({
  model: z.string(),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative(),
  cacheWriteTokens: z.number().int().nonnegative(),
  reasoningTokens: z.number().int().nonnegative(),
  /** Input tokens of the last step: how full the context was at the end of the turn. */
  contextTokens: z.number().int().nonnegative(),
  /** Output tokens of the last step: with `contextTokens`, the real size of the conversation so far. */
  lastStepOutputTokens: z.number().int().nonnegative().optional(),
  /** The context window the turn was budgeted against (an admin's override, an observed cut…). */
  contextWindow: z.number().int().positive().optional(),
  /** Fold's calibrated estimate of the first request's input tokens (compare with the real count). */
  estimatedInputTokens: z.number().int().nonnegative().optional(),
  steps: z.number().int().nonnegative(),
  /** The chat's compaction version whose view this turn sent: real usage describes that view only. */
  viewVersion: z.number().int().optional(),
  /** A request of that turn was trimmed in memory (Tier 2 or recovery): its usage is not the view's. */
  viewTrimmed: z.boolean().optional(),
  /** The hard-wall cap (tokens per part) that turn's view used, if any. */
  viewCapTokens: z.number().int().nullable().optional(),
  /** Epoch milliseconds. */
  startedAt: z.number(),
  firstTokenAt: z.number().nullable(),
  finishedAt: z.number(),
  /**
   * Milliseconds the model spent writing, each step from its first token to its end (tool runs
   * and waits for a next step are not in it). Absent on replies stored before it was kept.
   */
  writingMs: z.number().nonnegative().optional(),
  finishReason: z.string(),
});

export type MessageStats = z.infer<typeof messageStatsSchema>;

/** Why Fold stopped a reply between two steps: the day's tokens ran out, or could not be read. */
export const STOPPED_FOR = ["token_quota", "quota_unchecked"] as const;

export const messageMetadataSchema = z.object({
  stats: messageStatsSchema.optional(),
  /** Tool call id → how long the tool ran, in milliseconds. */
  toolDurationsMs: z.record(z.string(), z.number().nonnegative()).optional(),
  /** A timeline entry for a manual compaction, not a reply. */
  compaction: z.boolean().optional(),
  /** Set on a reply that failed: a readable reason; such a reply is not a finished answer. */
  error: z.string().optional(),
  /** The user pinned it (issue 14): never folded into the summary, sent verbatim. */
  pinned: z.boolean().optional(),
  /**
   * Set with `pinned` when the user unpinned it: no summary tells it (it was pinned when the
   * summary was written), so it stays verbatim until a compaction folds it, then both go.
   */
  foldPending: z.boolean().optional(),
  /**
   * Unpinned once and folded since: a rollback to a summary written before that fold makes it
   * pending again (lib/chat/invalidate.ts), as that summary may never have told it.
   */
  unpinned: z.boolean().optional(),
  /** The user stopped this reply: it is what was written until then. */
  stopped: z.boolean().optional(),
  /**
   * Set with `stopped` when Fold stopped it, not the user: today's token quota ran out, or it
   * could not be read (a tool loop does not go on unchecked).
   */
  stoppedFor: z.enum(STOPPED_FOR).optional(),
});

export type MessageMetadata = z.infer<typeof messageMetadataSchema>;
export type StoppedFor = (typeof STOPPED_FOR)[number];

/**
 * Whether a reply was sent to `modelId` at a window of `contextWindow` tokens: only then do its
 * counts (and the cap its view was cut to) describe a request of this room. A model whose window
 * changed (an admin's override, a local server reloaded) sizes and edits its view anew. A reply
 * stored before stats carried the window is taken as of this one.
 */
export function sentInRoom(
  stats: Pick<MessageStats, "model" | "contextWindow">,
  modelId: string,
  contextWindow: number,
): boolean {
  return stats.model === modelId && (stats.contextWindow ?? contextWindow) === contextWindow;
}

export function buildStats(input: {
  model: string;
  totalUsage: LanguageModelUsage;
  lastStepUsage: LanguageModelUsage | undefined;
  steps: number;
  estimatedInputTokens?: number;
  contextWindow?: number;
  viewVersion?: number;
  viewCapTokens?: number | null;
  viewTrimmed?: boolean;
  startedAt: number;
  firstTokenAt: number | null;
  finishedAt: number;
  writingMs?: number;
  finishReason: FinishReason | string;
}): MessageStats {
  const u = input.totalUsage;
  return {
    model: input.model,
    inputTokens: u.inputTokens ?? 0,
    outputTokens: u.outputTokens ?? 0,
    cacheReadTokens: u.inputTokenDetails?.cacheReadTokens ?? 0,
    cacheWriteTokens: u.inputTokenDetails?.cacheWriteTokens ?? 0,
    reasoningTokens: u.outputTokenDetails?.reasoningTokens ?? 0,
    contextTokens: input.lastStepUsage?.inputTokens ?? u.inputTokens ?? 0,
    lastStepOutputTokens: answerTokens(input.lastStepUsage ?? u),
    estimatedInputTokens: input.estimatedInputTokens,
    contextWindow: input.contextWindow,
    viewVersion: input.viewVersion,
    viewCapTokens: input.viewCapTokens,
    viewTrimmed: input.viewTrimmed,
    steps: input.steps,
    startedAt: input.startedAt,
    firstTokenAt: input.firstTokenAt,
    finishedAt: input.finishedAt,
    ...(input.writingMs === undefined ? {} : { writingMs: input.writingMs }),
    finishReason: String(input.finishReason),
  };
}

/**
 * What a step wrote that the next request carries: its output less its reasoning, which
 * providers drop from earlier turns (lib/context/count-units.ts counts it only in the loop).
 */
function answerTokens(usage: LanguageModelUsage): number {
  const reasoning = usage.outputTokenDetails?.reasoningTokens ?? 0;
  return Math.max(0, (usage.outputTokens ?? 0) - reasoning);
}

/** Two calls' usage together (a reply's attempts); a count neither reports stays unreported. */
export function sumUsage(a: LanguageModelUsage, b: LanguageModelUsage): LanguageModelUsage {
  const add = (x: number | undefined, y: number | undefined) =>
    x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0);
  return {
    inputTokens: add(a.inputTokens, b.inputTokens),
    inputTokenDetails: {
      noCacheTokens: add(a.inputTokenDetails?.noCacheTokens, b.inputTokenDetails?.noCacheTokens),
      cacheReadTokens: add(
        a.inputTokenDetails?.cacheReadTokens,
        b.inputTokenDetails?.cacheReadTokens,
      ),
      cacheWriteTokens: add(
        a.inputTokenDetails?.cacheWriteTokens,
        b.inputTokenDetails?.cacheWriteTokens,
      ),
    },
    outputTokens: add(a.outputTokens, b.outputTokens),
    outputTokenDetails: {
      textTokens: add(a.outputTokenDetails?.textTokens, b.outputTokenDetails?.textTokens),
      reasoningTokens: add(
        a.outputTokenDetails?.reasoningTokens,
        b.outputTokenDetails?.reasoningTokens,
      ),
    },
    totalTokens: add(a.totalTokens, b.totalTokens),
  };
}

/**
 * Figures derived for display: time to first token, total time, output speed. The speed is over
 * the time the model wrote (a reply stored before that was kept: from its first token on, tool
 * runs included).
 */
export function deriveTimings(stats: MessageStats) {
  const ttftMs = stats.firstTokenAt === null ? null : stats.firstTokenAt - stats.startedAt;
  const totalMs = stats.finishedAt - stats.startedAt;
  const generatingMs =
    stats.writingMs ??
    (stats.firstTokenAt === null ? totalMs : stats.finishedAt - stats.firstTokenAt);
  const tokensPerSecond = generatingMs > 0 ? (stats.outputTokens * 1000) / generatingMs : null;
  return { ttftMs, totalMs, tokensPerSecond };
}
