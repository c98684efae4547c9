import type { LiveBus } from "./bus";

/**
 * Stop, across instances: the Stop request may land on any instance, the
 * turn runs on one. The turn listens on its chat's channel while it runs;
 * a stop publishes there. A stop with no turn listening is a no-op.
 */
const channel = (chatId: string) => `fold:stop:${chatId}`;

/** Asks the chat's running turn, wherever it runs, to stop; the number of turns that heard it. */
export async function requestStop(bus: LiveBus, chatId: string): Promise<number> {
  const heard = await bus.publisher.publish(channel(chatId), "stop");
  return typeof heard === "number" ? heard : 0;
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
