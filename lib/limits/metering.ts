/**
 * Counts the tokens of every provider call a user's request makes — each step of a tool loop,
 * each summarizer attempt, each retry — as the provider reports them, whether or not the
 * reply is stored or the browser is still there. A call cut off before the provider reports
 * (Stop, a deadline, a dropped connection) still cost tokens: it counts Fold's estimate of
 * what it sent and what came back. So does a count the provider leaves out (a local server or a
 * gateway that sends no usage): a call is never free against the daily token limit.
 */
import type {
  LanguageModelV4,
  LanguageModelV4Content,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { type LanguageModel, wrapLanguageModel } from "ai";
import { withJoinedDeltas } from "@/lib/ai/joined-deltas";
import { overflowInStream } from "@/lib/compaction/overflow";
import { countTextTokens, defaultEstimator, unitsFromProviderPrompt } from "@/lib/context/tokens";

export type TokenSink = (tokens: number) => void;

/** Fold's estimate of what a call sent. */
const promptTokens = (prompt: LanguageModelV4Prompt) =>
  defaultEstimator.estimate(unitsFromProviderPrompt(prompt));

/** Input plus output tokens of one call: the provider's counts, Fold's estimate of one it left out. */
function callTokens(usage: LanguageModelV4Usage, prompt: LanguageModelV4Prompt, written: string) {
  const input = usage.inputTokens.total ?? promptTokens(prompt);
  const output = usage.outputTokens.total ?? countTextTokens(written);
  return input + output;
}

/** What a generated part holds of the answer: its text, or a tool call's input. */
function contentText(part: LanguageModelV4Content): string {
  if (part.type === "text" || part.type === "reasoning") return part.text;
  if (part.type === "tool-call") return part.input;
  return "";
}

/** What a streamed part brings of the answer's text. */
function partText(part: LanguageModelV4StreamPart): string {
  switch (part.type) {
    case "text-delta":
    case "reasoning-delta":
    case "tool-input-delta":
      return part.delta;
    default:
      return "";
  }
}

/** Parts a stream opens with, before any of the answer. */
const OPENING_PARTS = new Set<LanguageModelV4StreamPart["type"]>([
  "stream-start",
  "response-metadata",
  "raw",
]);

/** Fold's estimate of a call cut off before its usage came: what it sent, what came back. */
const cutOffTokens = (prompt: LanguageModelV4Prompt, written: string) =>
  promptTokens(prompt) + countTextTokens(written);

/**
 * The same model, reporting each call's tokens to `sink` once: the provider's count when the
 * call finishes, else (cut off, failed mid-stream) the estimate.
 */
export function meteredModel(model: LanguageModelV4, sink: TokenSink): LanguageModelV4 {
  return wrapLanguageModel({
    model,
    middleware: {
      wrapGenerate: async ({ doGenerate, params }) => {
        const sent = !params.abortSignal?.aborted;
        try {
          const result = await doGenerate();
          const written = result.content.map(contentText).join("");
          sink(callTokens(result.usage, params.prompt, written));
          return result;
        } catch (error) {
          // Stopped while the provider wrote: it read the prompt. A refusal costs nothing, nor
          // does a call stopped before it began (fetch sends nothing with an aborted signal).
          if (sent && params.abortSignal?.aborted) sink(cutOffTokens(params.prompt, ""));
          throw error;
        }
      },
      wrapStream: async ({ doStream, params }) => {
        const sent = !params.abortSignal?.aborted;
        let result: Awaited<ReturnType<typeof doStream>>;
        try {
          result = await doStream();
        } catch (error) {
          // Stopped before the provider answered (a long prompt's prefill): it read the prompt.
          // Stopped before the call began: nothing was sent.
          if (sent && params.abortSignal?.aborted) sink(cutOffTokens(params.prompt, ""));
          throw error;
        }
        const reader = result.stream.getReader();
        let counted = false;
        let written = "";
        let answered = false;
        // A prompt refused as too long before any of the answer, inside an opened stream (as
        // some gateways send it): the provider read no more of it than of the same 400. (Any
        // other error may come after the provider read the prompt: cut off, it is counted.)
        let refused = false;
        const count = (tokens: () => number) => {
          if (counted) return;
          counted = true;
          if (!refused) sink(tokens());
        };
        // Counted only for a call that ends without the provider's count (most end with it).
        const cutOff = () => count(() => cutOffTokens(params.prompt, written));
        const stream = new ReadableStream<LanguageModelV4StreamPart>({
          async pull(controller) {
            let next: ReadableStreamReadResult<LanguageModelV4StreamPart>;
            try {
              next = await reader.read();
            } catch (error) {
              cutOff();
              throw error;
            }
            if (next.done) {
              cutOff();
              controller.close();
              return;
            }
            const part = next.value;
            if (part.type === "error")
              refused ||= !answered && overflowInStream(part.error) !== null;
            else if (part.type !== "finish" && !OPENING_PARTS.has(part.type)) {
              answered = true;
              refused = false;
            }
            if (part.type === "finish") {
              // A count the provider gives after its refusal is what it read (usually nothing).
              if (refused && part.usage.inputTokens.total) refused = false;
              count(() => callTokens(part.usage, params.prompt, written));
            } else written += partText(part);
            controller.enqueue(part);
          },
          async cancel(reason) {
            cutOff();
            await reader.cancel(reason);
          },
        });
        return { ...result, stream };
      },
    },
  });
}

/**
 * A request's model resolver: each model metered, and its stream's bursts joined before the
 * turn reads them (lib/ai/joined-deltas.ts).
 */
export function meteredResolver(
  resolve: (modelId: string) => LanguageModelV4,
  sink: TokenSink,
): (modelId: string) => LanguageModel {
  return (modelId) => meteredModel(withJoinedDeltas(resolve(modelId)), sink);
}
