import { describe, expect, it } from "vitest";
import { memoryBus } from "@/lib/live/bus";
import { requestStop, requestStopOf, takePendingStop, watchStop } from "@/lib/live/stop";

const notAnswered = async () => false;
const answered = async () => true;

describe("a stop that names the message its turn answers", () => {
  it("waits for a turn that has not begun, which finds it once and only once", async () => {
    const bus = memoryBus();
    expect(await requestStopOf(bus, "chat-1", "u-1", notAnswered)).toBe(true);
    // Another message's turn (another chat's, or a later one) is not stopped by it.
    expect(await takePendingStop(bus, "chat-1", "u-2")).toBe(false);
    expect(await takePendingStop(bus, "chat-2", "u-1")).toBe(false);
    expect(await takePendingStop(bus, "chat-1", "u-1")).toBe(true);
    // Used up: asking again (Retry) runs.
    expect(await takePendingStop(bus, "chat-1", "u-1")).toBe(false);
  });

  it("reaches a turn that listens, and leaves nothing pending behind it", async () => {
    const bus = memoryBus();
    let stopped = 0;
    const unwatch = await watchStop(bus, "chat-1", "u-1", () => stopped++);
    expect(await requestStopOf(bus, "chat-1", "u-1", notAnswered)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(stopped).toBe(1);
    expect(await takePendingStop(bus, "chat-1", "u-1")).toBe(false);
    await unwatch();
  });

  it("does not stop another message's reply still being written; it waits for its own turn", async () => {
    const bus = memoryBus();
    let stopped = 0;
    // Another tab's reply, to u-1, is being written; this tab sent u-2 and pressed Stop.
    const unwatch = await watchStop(bus, "chat-1", "u-1", () => stopped++);
    expect(await requestStopOf(bus, "chat-1", "u-2", notAnswered)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(stopped).toBe(0);
    // A Stop naming no message stops whatever runs.
    await requestStop(bus, "chat-1");
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(stopped).toBe(1);
    await unwatch();
    // u-2's turn, once it begins, finds its stop.
    expect(await takePendingStop(bus, "chat-1", "u-2")).toBe(true);
  });

  it("leaves nothing when the message has its reply already", async () => {
    const bus = memoryBus();
    expect(await requestStopOf(bus, "chat-1", "u-1", answered)).toBe(false);
    expect(await takePendingStop(bus, "chat-1", "u-1")).toBe(false);
  });

  it("expires when no turn comes for it", async () => {
    let now = 0;
    const bus = memoryBus(() => now);
    await requestStopOf(bus, "chat-1", "u-1", notAnswered);
    now += 31_000;
    expect(await takePendingStop(bus, "chat-1", "u-1")).toBe(false);
  });
});
