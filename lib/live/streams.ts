import { setTimeout as sleep } from "node:timers/promises";
import {
  createResumableStreamContext,
  type ResumableStreamContext,
} from "resumable-stream/generic";
import { env } from "@/lib/env";
import { log } from "@/lib/log";
import type { LiveBus } from "./bus";

/**
 * A turn's stream, readable again while it runs: the turn publishes its
 * server-sent events through `resumable-stream`, and records which stream is
 * its chat's live one; a reader that arrives late (a reload, a second tab,
 * another instance) gets everything so far, then the rest as it comes.
 */
const contexts = new WeakMap<LiveBus, ResumableStreamContext>();

function contextOf(bus: LiveBus): ResumableStreamContext {
  let context = contexts.get(bus);
  if (!context) {
    context = createResumableStreamContext({
      keyPrefix: "fold:stream",
      // A long-running server: nothing to keep alive.
      waitUntil: null,
      // The library stops reading a stream for good when sending a chunk to a reader fails
      // (its read loop has no catch): the turn or compaction publishing it would never end,
      // holding its lease. A failed send costs that reader the chunk (it times out), nothing more.
      // Nor does it catch the writes that mark a stream done and drop its request channel, whose
      // failure (the bus gone as the stream ends) would be a rejection nobody handles: a reader
      // then learns the end from the chat's lease (resumeTurnStream), so they are logged only.
      publisher: {
        ...bus.publisher,
        publish: (channel: string, message: string) =>
          bus.publisher.publish(channel, message).catch((error: unknown) => {
            log.warn({ err: error, channel }, "live stream: a chunk did not reach its reader");
            return 0;
          }),
        set: (key: string, value: string, options?: { EX?: number }) =>
          bus.publisher.set(key, value, options).catch((error: unknown) => {
            log.warn({ err: error, key }, "live stream: a stream's state was not recorded");
            return null;
          }),
      },
      subscriber: {
        ...bus.subscriber,
        unsubscribe: (channel: string) =>
          bus.subscriber.unsubscribe(channel).catch((error: unknown) => {
            log.warn({ err: error, channel }, "live stream: leaving a channel failed");
          }),
      },
    });
    contexts.set(bus, context);
  }
  return context;
}

/**
 * What streams live in a chat: a turn's reply, or a background compaction's trace (which may
 * run beside the next turn, so each has its own record).
 */
export type LiveKind = "turn" | "compaction";

const activeKey = (chatId: string, kind: LiveKind) =>
  kind === "turn" ? `fold:live-stream:${chatId}` : `fold:live-compaction:${chatId}`;

/**
 * The live-stream record outlives any turn: the longest model call plus an hour for what comes
 * before it (Tier 1's summarizer passes, waiting for a background compaction), which the turn's
 * deadline does not count. A record a dead instance left behind does no harm meanwhile: the
 * routes resume only while the chat's lease is held.
 */
const activeSeconds = () => Math.ceil(env().turnMaxDurationMs / 1000) + 3_600;

/**
 * Publishes a turn's SSE stream under `streamId` and marks it as the chat's
 * live stream. Reads `sse` to its end whether or not anyone resumes; a bus
 * that fails costs resumption only, never the turn.
 */
export async function publishTurnStream(
  bus: LiveBus,
  chatId: string,
  streamId: string,
  sse: ReadableStream<string>,
  kind: LiveKind = "turn",
): Promise<void> {
  try {
    const own = await contextOf(bus).createNewResumableStream(streamId, () => sse);
    await bus.publisher.set(activeKey(chatId, kind), streamId, { EX: activeSeconds() });
    // The producer side needs no reader: drain our copy so the stream runs to its end.
    await own?.pipeTo(new WritableStream());
  } catch (error) {
    log.warn({ err: error, chatId }, "live stream: publishing failed; a reload will not resume");
    await sse.cancel().catch(() => undefined);
  }
}

/** The turn (or compaction) is over: its result is stored, so there is nothing live to follow. */
export async function endTurnStream(
  bus: LiveBus,
  chatId: string,
  kind: LiveKind = "turn",
): Promise<void> {
  await bus.publisher
    .set(activeKey(chatId, kind), "", { EX: 1 })
    .catch((error: unknown) => log.warn({ err: error, chatId }, "live stream: clearing failed"));
}

/**
 * How long resuming waits for the stream's producer: `resumable-stream` gives it a second, but
 * its answer never comes when the bus fails as it gives up (it cannot unsubscribe).
 */
const RESUME_WAIT_MS = 5_000;
/** How often a resumed stream asks whether what it follows still runs. */
const LIVE_CHECK_MS = 2_000;

/**
 * The chat's live stream from its start, or null when no turn is streaming. It ends with its
 * turn (or compaction) even when its end never comes (the instance running it died, or the bus
 * lost its last message): `running` says whether that still holds the chat.
 */
export async function resumeTurnStream(
  bus: LiveBus,
  chatId: string,
  kind: LiveKind,
  running: () => Promise<boolean>,
): Promise<ReadableStream<string> | null> {
  try {
    const streamId = await bus.publisher.get(activeKey(chatId, kind));
    if (typeof streamId !== "string" || streamId === "") return null;
    const resumed = await answeredInTime(contextOf(bus).resumeExistingStream(streamId));
    return resumed ? whileRunning(resumed, running) : null;
  } catch (error) {
    // The producer is gone (its instance died), or the bus is down: nothing to resume.
    log.warn({ err: error, chatId }, "live stream: resuming failed");
    return null;
  }
}

/** `resuming`'s stream, or an error after RESUME_WAIT_MS (a stream that comes later is dropped). */
async function answeredInTime(
  resuming: Promise<ReadableStream<string> | null | undefined>,
): Promise<ReadableStream<string> | null> {
  const deadline = new AbortController();
  const late = sleep(RESUME_WAIT_MS, undefined, { signal: deadline.signal }).then(() => {
    void resuming.then((stream) => stream?.cancel()).catch(() => undefined);
    throw new Error(`the stream's producer did not answer in ${RESUME_WAIT_MS / 1000} s`);
  });
  late.catch(() => undefined);
  try {
    return (await Promise.race([resuming, late])) ?? null;
  } finally {
    deadline.abort();
  }
}

/**
 * `stream`, ended once two checks in a row find that what it follows no longer runs (the first
 * may come while its last chunks are still on their way: a turn frees the chat just before its
 * stream ends). A check that fails (the database) counts as running.
 */
function whileRunning(
  stream: ReadableStream<string>,
  running: () => Promise<boolean>,
): ReadableStream<string> {
  const reader = stream.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let over = false;
  const end = () => {
    over = true;
    clearTimeout(timer);
  };
  return new ReadableStream<string>({
    start(controller) {
      let idle = 0;
      const check = async () => {
        idle = (await running().catch(() => true)) ? 0 : idle + 1;
        if (over) return;
        if (idle < 2) {
          timer = setTimeout(check, LIVE_CHECK_MS);
          return;
        }
        end();
        controller.close();
        void reader.cancel().catch(() => undefined);
      };
      timer = setTimeout(check, LIVE_CHECK_MS);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (over) return;
      if (done) {
        end();
        controller.close();
      } else {
        controller.enqueue(value);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}
