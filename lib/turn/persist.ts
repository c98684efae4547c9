import { createUIMessageStream, type UIMessageChunk } from "ai";
import type { HeldLease } from "@/lib/chat/lease";
import type { Db } from "@/lib/db/client";
import { isDeletedChatReference } from "@/lib/db/errors";
import { getChat } from "@/lib/db/queries/chats";
import { appendMessageAsTurnHolder } from "@/lib/db/queries/messages";
import { publicErrorText } from "@/lib/errors";
import { log } from "@/lib/log";
import { answerParts } from "@/lib/message/retry-marker";
import { foldEntry, keptOfStopped } from "@/lib/message/stopped-reply";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import type { TurnObservations } from "./observe";

/**
 * A reply assembled from its chunks as the turn writes them: the SDK builds the message once,
 * at the end (reading snapshots chunk by chunk, as readUIMessageStream does, copies the whole
 * reply per chunk: quadratic in a long tool loop). Fed directly, with no stream of its own
 * to tee and read: `reply` settles once `end` is called and the last chunk is taken in.
 */
export type ReplyAssembly = {
  write: (chunk: UIMessageChunk) => void;
  end: () => void;
  reply: Promise<FoldUIMessage | undefined>;
};

export function assembleReply(): ReplyAssembly {
  let end = () => {};
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  let write: (chunk: UIMessageChunk) => void = () => {};
  let reply: FoldUIMessage | undefined;
  const assembled = createUIMessageStream<FoldUIMessage>({
    // Called at once: `write` is the writer's from here on.
    execute: ({ writer }) => {
      write = (chunk) => writer.write(chunk as never);
      return ended;
    },
    onError: () => "",
    onEnd: ({ responseMessage }) => {
      reply = responseMessage;
    },
  });
  return {
    write: (chunk) => write(chunk),
    end,
    // Never before the turn's end, even when assembling failed: the reply is awaited before
    // the chat is freed and the browser's stream closed.
    reply: assembled
      .pipeTo(new WritableStream())
      .finally(() => ended)
      .then(() => reply),
  };
}

/** What the browser is told of a reply it saw that was not stored, before the cause. */
const UNSAVED = "This reply could not be saved, so it is not part of the chat:";
const LEASE_LOST = "the server stalled and the chat was taken over meanwhile. Retry it.";

/**
 * Step 6 of a turn: store the finished reply. A reply that failed or was cut
 * off by an error is not stored as an answer: the user's message stays, and
 * Retry asks again. A stopped reply (the user's Stop, or Fold's between two steps) is stored as
 * far as it got, marked as stopped, when it wrote anything; when it wrote nothing, only the trace
 * of a fold Tier 1 stored before the stop is, as that fold's timeline entry (keptOfStopped: the
 * page shows the same). A reply that should have been stored and was not says so in
 * `observed.unsaved`, for the browser. True when something was stored.
 */
export async function persistReply(
  db: Db,
  chatId: string,
  assembly: ReplyAssembly,
  observed: TurnObservations,
  /** The turn's lease: the reply is stored only while its token is on the chat's row. */
  lease: Pick<HeldLease, "asHolder">,
): Promise<boolean> {
  try {
    const reply = await assembly.reply;
    if (observed.leaseLost) return await lostLease(db, chatId, observed);
    const input = reply && !observed.error ? storedOf(reply, observed) : null;
    if (!input) {
      log.warn({ chatId, err: observed.error }, "turn ended without a complete reply; not stored");
      return false;
    }
    const stored = await lease.asHolder((token) =>
      appendMessageAsTurnHolder(db, chatId, input, token),
    );
    if (stored) return true;
    // The lease ran out unnoticed (no renewal came round to say so) and may be another turn's.
    observed.leaseLost = true;
    return await lostLease(db, chatId, observed);
  } catch (error) {
    if (isDeletedChatReference(error)) {
      // Deleted while it replied (DELETE stops the reply once the chat is gone): nowhere to
      // store it, and nothing went wrong.
      return deletedMeanwhile(chatId);
    }
    // Logged under the error id the browser is shown.
    const cause = publicErrorText(error, { chatId }, "storing the reply failed");
    observed.unsaved = `${UNSAVED} ${cause}`;
    return false;
  }
}

/** What a turn's reply stores: the finished reply, or what is kept of a stopped one; null: nothing. */
function storedOf(reply: FoldUIMessage, observed: TurnObservations) {
  const { id, metadata } = reply;
  if (!observed.stopped) {
    return observed.finished
      ? {
          id,
          role: "assistant" as const,
          parts: answerParts(reply.parts),
          metadata: metadata ?? null,
        }
      : null;
  }
  const kept = keptOfStopped(reply.parts);
  if (kept.kind === "nothing") return null;
  return kept.kind === "reply"
    ? { id, role: "assistant" as const, parts: kept.parts, metadata: metadata ?? null }
    : foldEntry(id, kept.parts);
}

/** A reply whose turn lost the chat's lease: not stored, and the browser told so. */
async function lostLease(db: Db, chatId: string, observed: TurnObservations): Promise<false> {
  // Deleted under the turn (its lease went with its row): nowhere to store it, nobody to tell.
  if (!(await getChat(db, chatId))) return deletedMeanwhile(chatId);
  log.warn({ chatId }, "the chat's lease was lost during the turn; its reply is not stored");
  // A reply ends as if it were stored, or, with nothing written yet, as if the user had stopped
  // it: it is told otherwise. Not a failed turn (it was told), nor one stopped before its model
  // call (there is no reply).
  if (!observed.error && !observed.stoppedBeforeModel) {
    observed.unsaved = `${UNSAVED} ${LEASE_LOST}`;
  }
  return false;
}

function deletedMeanwhile(chatId: string): false {
  log.info({ chatId }, "the chat was deleted during the turn; its reply is not stored");
  return false;
}
