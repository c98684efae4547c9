import type { UIMessageChunk } from "ai";
import { joinedDelta } from "@/lib/ai/joined-deltas";

type DeltaChunk = Extract<UIMessageChunk, { type: "text-delta" | "reasoning-delta" }>;

const isDelta = (chunk: UIMessageChunk): chunk is DeltaChunk =>
  chunk.type === "text-delta" || chunk.type === "reasoning-delta";

/**
 * The browser's copy of a turn's chunks: passed on as written, except its end (the finish
 * chunk and whatever follows), held back until `end` (the reply is stored by then, or the
 * browser is told it was not). A browser that went away (the stream
 * cancelled) is written nothing more; the turn goes on and is stored.
 *
 * Text that arrives in a burst (a fast provider, or a busy server catching up on what the
 * provider sent) goes out as one delta per burst rather than one per token: every chunk costs
 * its SSE frame, its copy to the live stream, a socket write and a browser render. The first
 * delta of a burst goes out at once, so the first token is never held; those after it in the
 * same turn of the event loop are joined and follow once the loop moves on (`setImmediate`),
 * or before any other chunk. A reply streamed at reading speed passes unchanged.
 */
export function browserCopy() {
  let controller: ReadableStreamDefaultController<UIMessageChunk> | undefined;
  let held: UIMessageChunk[] = [];
  /** Deltas joined since the last one went out, in this turn of the event loop. */
  let joined: DeltaChunk | undefined;
  let burst = false;
  const flush = () => {
    if (joined) controller?.enqueue(joined);
    joined = undefined;
  };
  const endBurst = () => {
    burst = false;
    flush();
  };
  const pass = (chunk: UIMessageChunk) => {
    if (!isDelta(chunk)) {
      flush();
      controller?.enqueue(chunk);
      return;
    }
    const grown = joined && joinedDelta(joined, chunk);
    if (grown) {
      joined = grown;
      return;
    }
    flush();
    if (burst) joined = chunk;
    else {
      burst = true;
      setImmediate(endBurst);
      controller?.enqueue(chunk);
    }
  };
  const stream = new ReadableStream<UIMessageChunk>({
    start: (c) => {
      controller = c;
    },
    cancel: () => {
      controller = undefined;
    },
  });
  return {
    stream,
    write(chunk: UIMessageChunk) {
      if (chunk.type === "finish" || held.length > 0) held.push(chunk);
      else pass(chunk);
    },
    /**
     * The turn is over: what was held back goes out, or, when `errorText` says the reply
     * the browser saw was not stored after all, an error in place of its end.
     */
    end(errorText?: string) {
      flush();
      const tail: UIMessageChunk[] =
        errorText === undefined ? held : [{ type: "error", errorText }];
      for (const chunk of tail) controller?.enqueue(chunk);
      held = [];
      controller?.close();
      controller = undefined;
    },
    /** The turn's tail failed (the chat could not be freed): the browser's stream errors. */
    fail(error: unknown) {
      joined = undefined;
      controller?.error(error);
      controller = undefined;
    },
  };
}
