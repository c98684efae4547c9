import type { LanguageModelV4 } from "@ai-sdk/provider";
import {
  isStepCount,
  type LanguageModel,
  type ModelMessage,
  type PrepareStepFunction,
  streamText,
  type ToolSet,
  wrapLanguageModel,
} from "ai";
import { parseModelId } from "@/lib/ai/model-id";
import type { ModelBudget } from "@/lib/chat/budget";
import type { MetricSink } from "@/lib/compaction/ports";
import { createRecoveryMiddleware, type RecoveryEvent } from "@/lib/compaction/recovery";
import { createTier2 } from "@/lib/compaction/tier2";
import type { Pinned } from "@/lib/compaction/trim";
import { defaultEstimator } from "@/lib/context/tokens";

/**
 * The model call of a turn, wired once: the provider model wrapped in the
 * recovery middleware (always on), and Tier 2 as `prepareStep` (proactive
 * compaction, off with COMPACTION_ENABLED=false), around one `streamText`
 * tool loop. The turn, the tests and the benchmarks all call this.
 */

export type ModelCallOptions<TOOLS extends ToolSet> = {
  model: LanguageModel;
  /** The chat model's window, Budget and calibrated ratio. */
  budget: ModelBudget;
  instructions: string;
  tools: TOOLS;
  /** Raw tokens of the instructions and tool schemas together, and of the schemas alone. */
  overheadTokens: number;
  toolOverheadTokens: number;
  messages: ModelMessage[];
  maxSteps: number;
  /** Asked before each further step of the tool loop: true ends the loop there. */
  stopBeforeStep?: () => Promise<boolean>;
  /** Tier 2 on (COMPACTION_ENABLED); recovery is on regardless. */
  proactive: boolean;
  /** Where Tier 1 folds this chat (CompactOutcome.trigger): Tier 2 trims past it, not before. */
  foldTrigger?: number;
  keepRecentToolResults: number;
  /** What the user pinned: in-memory trims cut it last. */
  pinned?: Pinned;
  onRecovery?: (event: RecoveryEvent) => Promise<void> | void;
  /** Tier 2 trimmed a step's messages in memory. */
  onTrim?: () => void;
  onError?: (error: unknown) => void;
  onMetric?: MetricSink;
  abortSignal?: AbortSignal;
  /** The AI SDK's telemetry events (AI_TELEMETRY); off unless asked for. */
  telemetry?: boolean;
  /** A seam for benchmarks that time or record the Tier 2 hook; the product passes nothing. */
  observePrepareStep?: (hook: PrepareStepFunction<TOOLS>) => PrepareStepFunction<TOOLS>;
};

/** Fold's built-in providers: the catalog knows their models' output limits by their own ids. */
const FIRST_PARTY = new Set(["openai", "anthropic", "google", "openrouter", "demo"]);

/**
 * The output limit a turn asks the provider for: the room Fold kept for the reply, so prompt
 * and reply fit the window together. Sent for a built-in provider's model whose limit Fold
 * knows, and for any model an admin set one for — never above what the model's own limit is
 * known to be (an override above it would be refused). A model on an OpenAI-compatible server
 * without an override gets the server's own default: its limit, if any, came from a catalog
 * entry matched by name, which may not be the model the server runs.
 */
export function outputLimitToSend(model: Pick<ModelBudget, "modelId" | "window" | "budget">) {
  const { window, budget } = model;
  if (window.maxOutputTokens === null) return undefined;
  const override = window.outputOverride;
  const provider = parseModelId(model.modelId)?.provider ?? "";
  if (!override && !FIRST_PARTY.has(provider)) return undefined;
  const modelLimit = override?.modelLimit ?? null;
  return modelLimit === null ? budget.outputReserve : Math.min(budget.outputReserve, modelLimit);
}

export function streamModelCall<TOOLS extends ToolSet>(options: ModelCallOptions<TOOLS>) {
  const { budget: model } = options;
  // Recovery trimmed a step's request: Tier 2 trims the next step's messages for good.
  let recovered: RecoveryEvent | null = null;
  const wrapped = wrapLanguageModel({
    model: options.model as LanguageModelV4,
    middleware: createRecoveryMiddleware({
      modelId: model.modelId,
      budget: model.budget,
      ratio: model.ratio,
      estimator: defaultEstimator,
      keepRecentToolResults: options.keepRecentToolResults,
      toolOverheadTokens: options.toolOverheadTokens,
      pinned: options.pinned,
      onRecovery: (event) => {
        recovered = event;
        return options.onRecovery?.(event);
      },
      onMetric: options.onMetric,
    }),
  });
  const tier2 = options.proactive
    ? createTier2<TOOLS>({
        budget: { ...model.budget, trigger: options.foldTrigger ?? model.budget.trigger },
        ratio: model.ratio,
        classRatios: model.classRatios,
        overheadTokens: options.overheadTokens,
        estimator: defaultEstimator,
        keepRecentToolResults: options.keepRecentToolResults,
        pinned: options.pinned,
        takeRecovery: () => {
          const event = recovered;
          recovered = null;
          return event;
        },
        onTrim: () => options.onTrim?.(),
        onMetric: options.onMetric,
      })
    : undefined;
  const result = streamText({
    model: wrapped,
    instructions: options.instructions,
    messages: options.messages,
    tools: options.tools,
    maxOutputTokens: outputLimitToSend(model),
    stopWhen: options.stopBeforeStep
      ? [isStepCount(options.maxSteps), options.stopBeforeStep]
      : isStepCount(options.maxSteps),
    prepareStep: tier2 && options.observePrepareStep ? options.observePrepareStep(tier2) : tier2,
    abortSignal: options.abortSignal,
    onError: options.onError ? ({ error }) => options.onError?.(error) : undefined,
    // Off, the SDK skips building and redacting a copy of each event for its diagnostics
    // channel: ≈ 0.4 ms of CPU a turn with nobody listening.
    telemetry: { isEnabled: options.telemetry ?? false },
  });
  // The provider stream runs to the end even when nobody reads the response.
  void result.consumeStream();
  return result;
}
