import type { LiveBus } from "./bus";

/**
 * Stop, across instances: the Stop request may land on any instance, the
 * turn runs on one. The turn listens on its chat's channel while it runs;
 * a stop publishes there.
 *
 * A Stop can also come before the turn listens: sent right after the
 * message, it may reach the server before the turn does. A stop that names
 * the message its turn answers is therefore also left for that turn as a
 * pending stop, which the turn looks for once it listens; a stop some turn
 * heard, or one for a message already answered, leaves nothing behind.
 */
const channel = (chatId: string) => `fold:stop:${chatId}`;
const pendingKey = (chatId: string) => `fold:stop-pending:${chatId}`;

/** How long a pending stop waits for the turn it names. */
const PENDING_STOP_SECONDS = 30;

/** Asks the chat's running turn, wherever it runs, to stop; the number of turns that heard it. */
export async function requestStop(bus: LiveBus, chatId: string): Promise<number> {
  const heard = await bus.publisher.publish(channel(chatId), "stop");
  return typeof heard === "number" ? heard : 0;
}

/**
 * Stops the turn that answers `messageId`, running or still on its way: left pending first,
 * then published, so a turn that starts listening in between still finds it. When a turn
 * heard it, or `answered()` says the message has its reply already, the pending stop is
 * withdrawn. True when a turn was stopped or will be.
 */
export async function requestStopOf(
  bus: LiveBus,
  chatId: string,
  messageId: string,
  answered: () => Promise<boolean>,
): Promise<boolean> {
  await bus.publisher.set(pendingKey(chatId), messageId, { EX: PENDING_STOP_SECONDS });
  if ((await requestStop(bus, chatId)) > 0) {
    await withdrawPendingStop(bus, chatId);
    return true;
  }
  if (await answered()) {
    await withdrawPendingStop(bus, chatId);
    return false;
  }
  return true;
}

/**
 * For a turn that has just started listening: whether a stop for the message it answers came
 * before. A stop found is used up, so asking again (Retry) is not stopped by it.
 */
export async function takePendingStop(
  bus: LiveBus,
  chatId: string,
  messageId: string,
): Promise<boolean> {
  if ((await bus.publisher.get(pendingKey(chatId))) !== messageId) return false;
  await withdrawPendingStop(bus, chatId);
  return true;
}

/** The publisher has no delete: an empty value that expires at once does the same. */
function withdrawPendingStop(bus: LiveBus, chatId: string) {
  return bus.publisher.set(pendingKey(chatId), "", { EX: 1 });
}

/** Calls `onStop` when a stop for the chat arrives; the returned function stops listening. */
export async function watchStop(
  bus: LiveBus,
  chatId: string,
  onStop: () => void,
): Promise<() => Promise<void>> {
  await bus.subscriber.subscribe(channel(chatId), () => onStop());
  return async () => {
    await bus.subscriber.unsubscribe(channel(chatId));
  };
}
