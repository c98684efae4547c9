import { vi } from "vitest";
import { liveBus } from "@/lib/live/bus";

/**
 * This process's bus slow to subscribe to stop channels: every turn's subscription to its chat's
 * stop channel waits until `open()`. `asked` lists the stop channels subscribed to meanwhile.
 * `restore()` opens them and puts the bus back.
 */
export function holdStopChannels() {
  const subscriber = liveBus().subscriber;
  const subscribe = subscriber.subscribe.bind(subscriber);
  const { promise: opened, resolve: open } = Promise.withResolvers<void>();
  const asked: string[] = [];
  const held = vi.spyOn(subscriber, "subscribe").mockImplementation(async (channel, listener) => {
    if (channel.startsWith("fold:stop:")) {
      asked.push(channel);
      await opened;
    }
    return subscribe(channel, listener);
  });
  return {
    asked,
    open,
    restore: () => {
      open();
      held.mockRestore();
    },
  };
}
