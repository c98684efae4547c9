import type { LanguageModelV4, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";

type DeltaPart = Extract<
  LanguageModelV4StreamPart,
  { type: "text-delta" | "reasoning-delta" | "tool-input-delta" }
>;

const isDelta = (part: LanguageModelV4StreamPart): part is DeltaPart =>
  part.type === "text-delta" || part.type === "reasoning-delta" || part.type === "tool-input-delta";

/** A delta as the model's stream parts and the UI's chunks both have it. */
type Delta = { type: string; id: string; delta: string; providerMetadata?: unknown };

/**
 * `held` with `next`'s text added, when `next` only adds text to it (the same part, and no
 * metadata either would lose); undefined when it does not.
 */
export function joinedDelta<T extends Delta>(held: T, next: T): T | undefined {
  if (held.type !== next.type || held.id !== next.id) return undefined;
  if (held.providerMetadata !== undefined || next.providerMetadata !== undefined) return undefined;
  return { ...held, delta: held.delta + next.delta };
}

/**
 * A model's stream with its bursts joined. Every part a turn reads passes a dozen web-stream
 * layers (the AI SDK's step machinery, the turn's observers, the UI stream), and a fast
 * provider or a busy server delivers tokens dozens at a time, each a part of its own: a
 * 1,000-token reply cost a turn ~100 ms of CPU, mostly in those layers. Parts are read from the
 * provider as they come; the first delta of a burst goes on at once, so no token is held, and
 * those that arrive in the same turn of the event loop are joined into one delta that follows
 * once the loop moves on (`setImmediate`), or before any other part. The same text, the same
 * other parts in the same order; an error (a Stop aborts the request) ends it at once. Tokens
 * streamed at reading speed pass one by one, unchanged.
 */
export function joinedDeltas(
  source: ReadableStream<LanguageModelV4StreamPart>,
): ReadableStream<LanguageModelV4StreamPart> {
  const reader = source.getReader();
  const waiting: LanguageModelV4StreamPart[] = [];
  let ended: { error?: unknown } | undefined;
  let cancelled = false;
  /** A delta went on in this turn of the event loop: the next ones join until it ends. */
  let burst = false;
  let wake: (() => void) | undefined;
  const awake = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  const readAll = async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const last = waiting.at(-1);
        const grown = last && isDelta(last) && isDelta(value) && joinedDelta(last, value);
        if (grown) waiting[waiting.length - 1] = grown;
        else waiting.push(value);
        awake();
      }
      ended = {};
    } catch (error) {
      // An error ends the stream at once, as it did the stream layers before: what waits unread
      // goes with it. A Stop aborts the provider's request, and nothing after it may reach the
      // reply.
      ended = { error };
      waiting.length = 0;
    }
    awake();
  };
  /** Whether the next part may go: any but a lone delta of a burst, which may still grow. */
  const ready = () => {
    const [next] = waiting;
    if (!next) return ended !== undefined;
    return !burst || !isDelta(next) || waiting.length > 1 || ended !== undefined;
  };
  return new ReadableStream<LanguageModelV4StreamPart>(
    {
      start() {
        void readAll();
      },
      async pull(controller) {
        while (!ready()) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
        if (cancelled) return;
        const next = waiting.shift();
        if (!next) {
          if (ended && "error" in ended) controller.error(ended.error);
          else controller.close();
          return;
        }
        if (isDelta(next) && !burst) {
          burst = true;
          setImmediate(() => {
            burst = false;
            awake();
          });
        }
        controller.enqueue(next);
      },
      cancel(reason) {
        cancelled = true;
        return reader.cancel(reason);
      },
    },
    // Pulled only when read: a part queued ahead of its reader could no longer join the next.
    { highWaterMark: 0 },
  );
}

/** `model`, its streams' bursts joined (joinedDeltas). */
export function withJoinedDeltas(model: LanguageModelV4): LanguageModelV4 {
  return wrapLanguageModel({
    model,
    middleware: {
      wrapStream: async ({ doStream }) => {
        const result = await doStream();
        return { ...result, stream: joinedDeltas(result.stream) };
      },
    },
  });
}
