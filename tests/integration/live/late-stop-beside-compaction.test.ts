import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type LiveBus, memoryBus, redisBus } from "@/lib/live/bus";
import { listenForStop, requestStopOf, takePendingStop } from "@/lib/live/stop";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/**
 * A stop naming no attempt (a tab that follows a reply it did not send) that comes once its
 * message's turn has ended is void, even while the background compaction that turn started
 * listens on the chat's stop channel (for a delete or a disabled account) and so counts as
 * having heard it: left pending, it stopped the next Regenerate of that message.
 */
describe.each([
  ["memory", () => memoryBus()],
  ["redis", () => redisBus(REDIS_URL)],
] as Array<[string, () => LiveBus]>)("on the %s bus", (_name, makeBus) => {
  it("a late stop naming no attempt is withdrawn while a background compaction listens on the chat", async () => {
    const bus = makeBus();
    const chatId = `chat-${randomUUID()}`;
    const messageId = `u-${randomUUID()}`;
    const compaction = listenForStop(bus, chatId, undefined, () => undefined, {
      leavesStopOfAll: true,
    });
    await compaction.looked;
    try {
      // The message's turn has ended: stored, the chat free of turns.
      expect(await requestStopOf(bus, chatId, { messageId }, async () => true)).toBe(false);
      // The Regenerate of that message that follows is not stopped by it.
      expect(await takePendingStop(bus, chatId, { messageId, attemptId: "regenerate" })).toBe(
        false,
      );
      // A stop for a turn still running (or on its way) is kept for it.
      expect(await requestStopOf(bus, chatId, { messageId }, async () => false)).toBe(true);
      expect(await takePendingStop(bus, chatId, { messageId, attemptId: "regenerate" })).toBe(true);
    } finally {
      await compaction();
    }
  });
});
