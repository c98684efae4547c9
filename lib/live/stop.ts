import { log } from "@/lib/log";
import type { LiveBus } from "./bus";

/**
 * Stop, across instances: the Stop request may land on any instance, the
 * turn runs on one. The turn listens on its chat's channel while it runs;
 * a stop publishes there.
 *
 * A Stop can also come before the turn listens: sent right after the
 * message, it may reach the server before the turn does. A stop that names
 * the message its turn answers is therefore also left for that turn as a
 * pending stop, which the turn looks for once it listens; the turn that
 * hears it uses it up, and one for a message already answered leaves nothing
 * behind. A named stop stops only the turn answering that message: another
 * tab's reply still being written in the same chat goes on.
 *
 * The page also names its attempt: each request it sends (a send, a Retry, a Regenerate) carries
 * an id of its own, and its Stop names that id. A stop naming an attempt stops only that
 * attempt's turn: one that comes after its turn ended without a stored reply (nothing tells the
 * server it came late) cannot stop the next Retry of the same message. A stop naming no attempt
 * (a page that follows a reply it did not send) stops whichever turn answers the message.
 *
 * An admin's stop (a disabled or deleted account) names no message: it is left pending, under
 * a key of its own (a named stop never overwrites it, nor it one), for whichever turn of the
 * chat listens next, as a turn holds the chat's lease from its admission on but listens only
 * once it has prepared. The turn it reaches uses it up, by hearing it or by finding it when it
 * starts listening; a turn's own end-of-turn clean-up leaves it. It waits only as long as a
 * turn takes from its admission to listening, so it cannot outlive the account's closing and
 * stop a turn the account sends after an admin opens it again.
 */
const channel = (chatId: string) => `fold:stop:${chatId}`;
/**
 * Where a named stop waits: one key per attempt (a late stop for one attempt never replaces the
 * stop pending for another), and one for stops naming no attempt. It holds the message id.
 */
const pendingKey = (chatId: string, attemptId?: string) =>
  attemptId === undefined
    ? `fold:stop-pending:${chatId}`
    : `fold:stop-pending:${chatId}:${attemptId}`;
const pendingAnyKey = (chatId: string) => `fold:stop-pending-any:${chatId}`;

/** How long a pending stop waits for the turn it names. */
const PENDING_STOP_SECONDS = 30;
/** How long an admin's stop waits for a turn admitted but not yet listening (moments). */
const PENDING_ANY_STOP_SECONDS = 5;

const STOP_ANY = "stop";
const STOP_OF = "stop:";

/** The turn a stop names: the user message it answers, and the page's attempt when known. */
export type TurnAttempt = { messageId: string; attemptId?: string };

/**
 * How a named stop travels on the channel: the message id as it is when it names no attempt (as
 * instances before attempts wrote it), JSON when it names one.
 */
const encode = ({ messageId, attemptId }: TurnAttempt) =>
  attemptId === undefined ? messageId : JSON.stringify({ messageId, attemptId });

function decode(value: string | null): TurnAttempt | null {
  if (!value) return null;
  if (value.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(value);
      const { messageId, attemptId } = (parsed ?? {}) as Record<string, unknown>;
      if (typeof messageId === "string" && typeof attemptId === "string") {
        return { messageId, attemptId };
      }
    } catch {
      // A message id of its own that starts with a brace.
    }
  }
  return { messageId: value };
}

/** Whether a stop naming `target` is meant for the turn answering `turn`. */
const names = (target: TurnAttempt | null, turn: TurnAttempt) =>
  target !== null &&
  target.messageId === turn.messageId &&
  (target.attemptId === undefined || target.attemptId === turn.attemptId);
/** The pending value of an admin's stop: any turn of the chat, whichever message it answers. */
const PENDING_ANY = "*";

/**
 * Asks the chat's running turn, wherever it runs, to stop — only the one `target` names when it
 * is given; the number of turns that heard it (whichever they answer).
 */
export async function requestStop(
  bus: LiveBus,
  chatId: string,
  target?: TurnAttempt,
): Promise<number> {
  let heard: unknown;
  try {
    heard = await bus.publisher.publish(
      channel(chatId),
      target ? STOP_OF + encode(target) : STOP_ANY,
    );
  } catch (error) {
    return stopHereOrThrow(chatId, target, error);
  }
  return typeof heard === "number" ? heard : 0;
}

/**
 * The turns running in this process, each with what stops it: what a stop falls back on when
 * the bus fails (Redis down or hung), so Stop still reaches a turn of the instance it lands on.
 */
const runningHere = new Map<string, Set<{ answering?: TurnAttempt; onStop: () => void }>>();

/**
 * The bus failed a stop: the turns of this process it is meant for are stopped directly (how
 * many), or, with none here, the failure is thrown (the turn may run on another instance).
 */
function stopHereOrThrow(chatId: string, target: TurnAttempt | undefined, error: unknown): number {
  let stopped = 0;
  for (const turn of runningHere.get(chatId) ?? []) {
    if (target !== undefined && !(turn.answering && names(target, turn.answering))) continue;
    turn.onStop();
    stopped += 1;
  }
  if (stopped === 0) throw error;
  log.warn({ err: error, chatId }, "stop channel unavailable; stopped the turn running here");
  return stopped;
}

/**
 * Stops the turn `target` names, running or still on its way: left pending first, then
 * published, so a turn that starts listening in between still finds it. The turn that hears it
 * uses the pending stop up (another turn of the chat leaves it for its own). True when a turn
 * was stopped or will be.
 *
 * A stop naming an attempt stays pending until its turn takes it or it expires: that attempt (a
 * send, a Regenerate, an edit) may not be admitted yet, whatever the chat shows, and no other
 * turn can take a stop meant for it alone. One naming no attempt (a page that follows a reply it
 * did not send) is withdrawn when `ended()` says its message's turn is over.
 */
export async function requestStopOf(
  bus: LiveBus,
  chatId: string,
  target: TurnAttempt,
  ended: () => Promise<boolean>,
): Promise<boolean> {
  const key = pendingKey(chatId, target.attemptId);
  try {
    await bus.publisher.set(key, target.messageId, { EX: PENDING_STOP_SECONDS });
  } catch (error) {
    return stopHereOrThrow(chatId, target, error) > 0;
  }
  await requestStop(bus, chatId, target);
  if (target.attemptId !== undefined) return true;
  // Whether anything heard it says nothing: a background compaction listens on the chat's
  // channel too, and counts among those that heard a stop no turn of its message will.
  if (await ended()) {
    await withdrawPending(bus, key);
    return false;
  }
  return true;
}

/**
 * Stops every turn of the chat, running or still on its way (admitted, not yet listening): left
 * pending for any of them first, then published. Throws when the bus does.
 */
export async function requestStopOfAnyTurn(bus: LiveBus, chatId: string): Promise<void> {
  try {
    await bus.publisher.set(pendingAnyKey(chatId), PENDING_ANY, {
      EX: PENDING_ANY_STOP_SECONDS,
    });
  } catch (error) {
    stopHereOrThrow(chatId, undefined, error);
    return;
  }
  await requestStop(bus, chatId);
}

/**
 * For a turn that has just started listening: whether a stop meant for it (its message, and its
 * attempt or none) came before. A stop found is used up, so asking again (Retry) is not stopped
 * by it; one naming another attempt is left alone.
 */
export async function takePendingStop(
  bus: LiveBus,
  chatId: string,
  turn: TurnAttempt,
): Promise<boolean> {
  const keys = [
    pendingKey(chatId),
    ...(turn.attemptId === undefined ? [] : [pendingKey(chatId, turn.attemptId)]),
  ];
  return anyFound(
    await Promise.allSettled(
      keys.map((key) => takePending(bus, key, (value) => value === turn.messageId)),
    ),
  );
}

/**
 * Whether any of several looks found a stop: one found (and so used up) is a stop, whatever
 * became of the others; with none found, the first look that failed throws.
 */
function anyFound(looks: PromiseSettledResult<boolean>[]): boolean {
  if (looks.some((r) => r.status === "fulfilled" && r.value)) return true;
  const failed = looks.find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
  return false;
}

/**
 * How a listener treats the stop of all the chat's work (a delete, an account disabled: a stop
 * naming no turn): a turn uses up its pending copy; work beside the chat's turns (a background
 * compaction) `leavesStopOfAll`, reading it without using it up, so a turn on its way still
 * finds it.
 */
export type StopListening = { leavesStopOfAll?: boolean };

/** How often a running turn looks for a stop left pending for it. */
const PENDING_STOP_POLL_MS = 1_000;

/**
 * Looks for a stop left pending for the turn `answering` names, or an admin's for any turn of
 * the chat: at once, then every PENDING_STOP_POLL_MS until it finds one (then `onStop`) or the
 * returned function is called. A stop whose publish the turn missed still reaches it a moment
 * later: its subscription failed or came after the publish, or Redis dropped it while the
 * subscriber reconnected (pub/sub delivers at most once, to whoever listens then). `looked` is
 * called once the first look is done, whatever it found.
 */
export function pollPendingStop(
  bus: LiveBus,
  chatId: string,
  answering: TurnAttempt | undefined,
  onStop: () => void,
  looked?: () => void,
  { leavesStopOfAll = false }: StopListening = {},
): () => void {
  let active = true;
  let warned = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const look = async () =>
    anyFound(
      await Promise.allSettled([
        answering ? takePendingStop(bus, chatId, answering) : false,
        leavesStopOfAll ? pendingStopOfAny(bus, chatId) : takePendingStopOfAny(bus, chatId),
      ]),
    );
  const next = () => {
    look()
      .then((found) => {
        if (!active) return;
        if (found) {
          active = false;
          onStop();
        }
      })
      .catch((error: unknown) => {
        // Once per turn: a bus that is down fails every look.
        if (!warned) log.warn({ err: error, chatId }, "pending stop unread");
        warned = true;
      })
      .finally(() => {
        looked?.();
        if (active) timer = setTimeout(next, PENDING_STOP_POLL_MS);
      });
  };
  next();
  return () => {
    active = false;
    clearTimeout(timer);
  };
}

/** Uses up an admin's pending stop (one for any turn of the chat); whether there was one. */
function takePendingStopOfAny(bus: LiveBus, chatId: string): Promise<boolean> {
  return takePending(bus, pendingAnyKey(chatId), (value) => value === PENDING_ANY);
}

/** Whether an admin's stop is pending for the chat, left for whoever uses it up. */
async function pendingStopOfAny(bus: LiveBus, chatId: string): Promise<boolean> {
  return (await bus.publisher.get(pendingAnyKey(chatId))) === PENDING_ANY;
}

/** Uses up the pending stop under `key` when `meant` accepts it; whether it did. */
async function takePending(
  bus: LiveBus,
  key: string,
  meant: (value: string | null) => boolean,
): Promise<boolean> {
  const value = await bus.publisher.get(key);
  if (!meant(typeof value === "string" ? value : null)) return false;
  await withdrawPending(bus, key);
  return true;
}

/** The publisher has no delete: an empty value that expires at once does the same. */
function withdrawPending(bus: LiveBus, key: string) {
  return bus.publisher.set(key, "", { EX: 1 });
}

/**
 * Everything that stops a running turn, as the turn listens for it: a stop published on the
 * chat's channel (`watchStop`), and one left pending, looked for once the turn listens (or gave
 * up listening) and then every moment while it runs (`pollPendingStop`: one whose publish the
 * turn missed still stops it). The returned function stops listening and looking; its `looked`
 * settles once the turn listens and has looked for a pending stop the first time, for a model
 * call to wait on, briefly (STOP_LOOK_WAIT_MS): a Stop sent right after the message, before the
 * turn listened, then stops the turn before its provider is called.
 */
export function listenForStop(
  bus: LiveBus,
  chatId: string,
  answering: TurnAttempt | undefined,
  onStop: () => void,
  listening: StopListening = {},
): StopListener {
  const here = { ...(answering ? { answering } : {}), onStop };
  const turns = runningHere.get(chatId) ?? new Set();
  runningHere.set(chatId, turns.add(here));
  const watching = watchStop(bus, chatId, answering, onStop, listening).catch((error: unknown) => {
    log.warn(
      { err: error, chatId },
      "stop channel unavailable; only a pending stop stops this turn",
    );
    return async () => undefined;
  });
  const { promise: looked, resolve: lookedOnce } = Promise.withResolvers<void>();
  const polling = watching.then(() =>
    pollPendingStop(bus, chatId, answering, onStop, () => lookedOnce(), listening),
  );
  const unwatch = async () => {
    turns.delete(here);
    if (turns.size === 0 && runningHere.get(chatId) === turns) runningHere.delete(chatId);
    lookedOnce();
    (await polling)();
    await (await watching)();
  };
  return Object.assign(unwatch, { looked });
}

/** What `listenForStop` returns: the function that stops listening, and its first look. */
export type StopListener = (() => Promise<void>) & { looked: Promise<void> };

/**
 * How long a model call waits for its turn's first look for a stop: the look is one or two
 * Redis round trips begun before the turn's preparation, so it is almost always done by then;
 * a Redis that hangs delays the first token by this much, not more.
 */
export const STOP_LOOK_WAIT_MS = 250;

/** Until the turn has first looked for a stop meant for it, or STOP_LOOK_WAIT_MS at most. */
export async function firstStopLook(listener: Pick<StopListener, "looked">): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    listener.looked,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, STOP_LOOK_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
}

/**
 * Calls `onStop` when a stop for the turn `answering` names arrives on the chat's channel (one
 * naming no message, or naming its message and its attempt or none, whose pending copy it uses
 * up; an admin's, whose pending copy it uses up too unless it `leavesStopOfAll`); the returned
 * function stops listening.
 * Stops published before it listened are `pollPendingStop`'s.
 */
export async function watchStop(
  bus: LiveBus,
  chatId: string,
  answering: TurnAttempt | undefined,
  onStop: () => void,
  { leavesStopOfAll = false }: StopListening = {},
): Promise<() => Promise<void>> {
  // A listener the bus failed to drop (Redis stalled when the turn ended) hears nothing more:
  // left live, it would use up stops meant for a later turn answering the same message.
  let listening = true;
  const listener = (message: string) => {
    if (!listening) return;
    if (message === STOP_ANY) {
      onStop();
      if (!leavesStopOfAll) void takePendingStopOfAny(bus, chatId).catch(() => undefined);
    } else if (
      answering !== undefined &&
      message.startsWith(STOP_OF) &&
      names(decode(message.slice(STOP_OF.length)), answering)
    ) {
      onStop();
      void takePendingStop(bus, chatId, answering).catch(() => undefined);
    }
  };
  const unwatch = async () => {
    listening = false;
    // This listener only: another turn of the chat listening in this process keeps listening.
    await bus.subscriber.unsubscribe(channel(chatId), listener);
  };
  try {
    await bus.subscriber.subscribe(channel(chatId), listener);
  } catch (error) {
    // Given up on, the subscription may still land later: it must not listen then.
    void unwatch().catch(() => undefined);
    throw error;
  }
  return unwatch;
}
