import { describe, expect, it } from "vitest";
import { memoryBus } from "@/lib/live/bus";
import {
  listenForStop,
  pollPendingStop,
  requestStop,
  requestStopOf,
  requestStopOfAnyTurn,
  takePendingStop,
  watchStop,
} from "@/lib/live/stop";

const notAnswered = async () => false;
const answered = async () => true;
/** Lets the memory bus deliver, and a watch look for a pending stop. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("a stop that names the message its turn answers", () => {
  it("waits for a turn that has not begun, which finds it once and only once", async () => {
    const bus = memoryBus();
    expect(await requestStopOf(bus, "chat-1", { messageId: "u-1" }, notAnswered)).toBe(true);
    // Another message's turn (another chat's, or a later one) is not stopped by it.
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-2" })).toBe(false);
    expect(await takePendingStop(bus, "chat-2", { messageId: "u-1" })).toBe(false);
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-1" })).toBe(true);
    // Used up: asking again (Retry) runs.
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-1" })).toBe(false);
  });

  it("reaches a turn that listens, and leaves nothing pending behind it", async () => {
    const bus = memoryBus();
    let stopped = 0;
    const unwatch = await watchStop(bus, "chat-1", { messageId: "u-1" }, () => stopped++);
    expect(await requestStopOf(bus, "chat-1", { messageId: "u-1" }, notAnswered)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(stopped).toBe(1);
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-1" })).toBe(false);
    await unwatch();
  });

  it("does not stop another message's reply still being written; it waits for its own turn", async () => {
    const bus = memoryBus();
    let stopped = 0;
    // Another tab's reply, to u-1, is being written; this tab sent u-2 and pressed Stop.
    const unwatch = await watchStop(bus, "chat-1", { messageId: "u-1" }, () => stopped++);
    expect(await requestStopOf(bus, "chat-1", { messageId: "u-2" }, notAnswered)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(stopped).toBe(0);
    // A Stop naming no message stops whatever runs.
    await requestStop(bus, "chat-1");
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(stopped).toBe(1);
    await unwatch();
    // u-2's turn, once it begins, finds its stop.
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-2" })).toBe(true);
  });

  it("naming the page's attempt, stops only that attempt's turn, not a Retry of the same message", async () => {
    const bus = memoryBus();
    const first = { messageId: "u-1", attemptId: "a-1" };
    const retry = { messageId: "u-1", attemptId: "a-2" };
    // The first attempt ended without a reply before its Stop came: the stop waits in vain.
    expect(await requestStopOf(bus, "chat-1", first, notAnswered)).toBe(true);
    expect(await takePendingStop(bus, "chat-1", retry)).toBe(false);
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-1" })).toBe(false);
    // Still there for its own attempt (sent before that attempt's turn began).
    expect(await takePendingStop(bus, "chat-1", first)).toBe(true);

    let stopped = 0;
    const unwatch = await watchStop(bus, "chat-1", retry, () => stopped++);
    await requestStop(bus, "chat-1", first);
    await settled();
    expect(stopped).toBe(0);
    await requestStop(bus, "chat-1", retry);
    await settled();
    expect(stopped).toBe(1);
    await unwatch();
  });

  it("a late stop for one attempt does not replace the stop waiting for another attempt", async () => {
    const bus = memoryBus();
    const retry = { messageId: "u-1", attemptId: "a-2" };
    // Stop on the Retry, then the first attempt's Stop, sent earlier, lands after it.
    expect(await requestStopOf(bus, "chat-1", retry, notAnswered)).toBe(true);
    expect(
      await requestStopOf(bus, "chat-1", { messageId: "u-1", attemptId: "a-1" }, notAnswered),
    ).toBe(true);
    expect(await takePendingStop(bus, "chat-1", retry)).toBe(true);
    // Used up; the first attempt's is still its own.
    expect(await takePendingStop(bus, "chat-1", retry)).toBe(false);
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-1", attemptId: "a-1" })).toBe(true);
  });

  it("a stop for an attempt stays pending for that attempt alone, even when its message has its reply", async () => {
    const bus = memoryBus();
    // A Regenerate's attempt, not admitted yet: the message still shows its old reply.
    const regenerate = { messageId: "u-1", attemptId: "a-1" };
    expect(await requestStopOf(bus, "chat-1", regenerate, answered)).toBe(true);
    // Another attempt at the message (a Retry after it) is not stopped by it.
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-1", attemptId: "a-2" })).toBe(
      false,
    );
    expect(await takePendingStop(bus, "chat-1", regenerate)).toBe(true);
    expect(await takePendingStop(bus, "chat-1", regenerate)).toBe(false);
    // One naming no attempt, for an answered message, is withdrawn: it would stop the next one.
    expect(await requestStopOf(bus, "chat-1", { messageId: "u-1" }, answered)).toBe(false);
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-1", attemptId: "a-3" })).toBe(
      false,
    );
  });

  it("naming no attempt (a page following a reply it did not send), stops whichever attempt answers the message", async () => {
    const bus = memoryBus();
    expect(await requestStopOf(bus, "chat-1", { messageId: "u-1" }, notAnswered)).toBe(true);
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-1", attemptId: "a-7" })).toBe(true);
    let stopped = 0;
    const unwatch = await watchStop(
      bus,
      "chat-1",
      { messageId: "u-1", attemptId: "a-8" },
      () => stopped++,
    );
    await requestStop(bus, "chat-1", { messageId: "u-1" });
    await settled();
    expect(stopped).toBe(1);
    await unwatch();
  });

  it("leaves nothing when the message has its reply already", async () => {
    const bus = memoryBus();
    expect(await requestStopOf(bus, "chat-1", { messageId: "u-1" }, answered)).toBe(false);
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-1" })).toBe(false);
  });

  it("expires when no turn comes for it", async () => {
    let now = 0;
    const bus = memoryBus(() => now);
    await requestStopOf(bus, "chat-1", { messageId: "u-1" }, notAnswered);
    now += 31_000;
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-1" })).toBe(false);
  });
});

describe("a turn's stop listener the bus could not drop", () => {
  /** A bus whose subscriber keeps every callback it was given and fails as told. */
  function stallingBus(fail: { subscribe?: boolean; unsubscribe?: boolean }) {
    const bus = memoryBus();
    const heard: Array<(message: string) => void> = [];
    bus.subscriber.subscribe = async (_channel, callback) => {
      // The subscription lands (Redis answered late), whether or not the caller waited for it.
      heard.push(callback);
      if (fail.subscribe) throw new Error("not answering");
    };
    bus.subscriber.unsubscribe = async () => {
      if (fail.unsubscribe) throw new Error("not answering");
    };
    return { bus, heard };
  }

  it("hears nothing once its turn stopped listening, though the bus still holds it", async () => {
    const { bus, heard } = stallingBus({ unsubscribe: true });
    let stopped = 0;
    const unwatch = await watchStop(bus, "chat-1", { messageId: "u-1" }, () => stopped++);
    await expect(unwatch()).rejects.toThrow();
    // A Retry of u-1 is the chat's turn now: its stop is not this listener's to take.
    for (const listener of heard) listener("stop:u-1");
    for (const listener of heard) listener('stop:{"messageId":"u-1","attemptId":"a-1"}');
    for (const listener of heard) listener("stop");
    expect(stopped).toBe(0);
  });

  it("hears nothing when its subscription was given up on and landed later", async () => {
    const { bus, heard } = stallingBus({ subscribe: true });
    let stopped = 0;
    await expect(watchStop(bus, "chat-1", { messageId: "u-1" }, () => stopped++)).rejects.toThrow();
    for (const listener of heard) listener("stop");
    expect(stopped).toBe(0);
  });
});

describe("an admin's stop, for whichever turn of the chat runs", () => {
  it("reaches a turn that starts listening only after it was published, whatever it answers", async () => {
    const bus = memoryBus();
    await requestStopOfAnyTurn(bus, "chat-1");
    const stopped: string[] = [];
    // A turn admitted before the stop, listening once it has prepared; one of another chat.
    const unwatchOther = listenForStop(bus, "chat-2", { messageId: "u-9" }, () =>
      stopped.push("other"),
    );
    const unwatch = listenForStop(bus, "chat-1", undefined, () => stopped.push("late"));
    await settled();
    expect(stopped).toEqual(["late"]);
    await Promise.all([unwatch(), unwatchOther()]);
  });

  it("is used up by the turn it reaches, found or heard", async () => {
    const bus = memoryBus();
    let stopped = 0;
    await requestStopOfAnyTurn(bus, "chat-1");
    const found = listenForStop(bus, "chat-1", { messageId: "u-1" }, () => stopped++);
    await settled();
    await found();
    const heard = listenForStop(bus, "chat-1", { messageId: "u-2" }, () => stopped++);
    await settled();
    expect(stopped).toBe(1);
    await requestStopOfAnyTurn(bus, "chat-1");
    await settled();
    expect(stopped).toBe(2);
    await heard();
    // The next turn (the account enabled again) runs.
    const next = listenForStop(bus, "chat-1", { messageId: "u-3" }, () => stopped++);
    await settled();
    expect(stopped).toBe(2);
    await next();
  });

  it("outlasts the end-of-turn clean-up of a turn that had stopped listening, for the turn after it", async () => {
    const bus = memoryBus();
    const stopped: string[] = [];
    const unwatchEnding = listenForStop(bus, "chat-1", { messageId: "u-1" }, () =>
      stopped.push("ending"),
    );
    await unwatchEnding();
    await requestStopOfAnyTurn(bus, "chat-1");
    // runTurn's clean-up, once it stopped listening: a pending stop naming its message.
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-1" })).toBe(false);
    // The turn that waited for the chat's lease takes it, and is stopped.
    const unwatchWaiting = listenForStop(bus, "chat-1", { messageId: "u-2" }, () =>
      stopped.push("waiting"),
    );
    await settled();
    expect(stopped).toEqual(["waiting"]);
    await unwatchWaiting();
  });

  it("leaves a stop naming a message to its own turn", async () => {
    const bus = memoryBus();
    let stopped = 0;
    expect(await requestStopOf(bus, "chat-1", { messageId: "u-1" }, notAnswered)).toBe(true);
    const unwatch = listenForStop(bus, "chat-1", { messageId: "u-2" }, () => stopped++);
    await settled();
    expect(stopped).toBe(0);
    await unwatch();
    expect(await takePendingStop(bus, "chat-1", { messageId: "u-1" })).toBe(true);
  });

  it("neither overwrites a stop naming a message nor is overwritten by one", async () => {
    const bus = memoryBus();
    const stopped: string[] = [];
    expect(await requestStopOf(bus, "chat-1", { messageId: "u-1" }, notAnswered)).toBe(true);
    await requestStopOfAnyTurn(bus, "chat-1");
    // The user's own Stop of a message answered already withdraws only its own pending stop.
    expect(await requestStopOf(bus, "chat-1", { messageId: "u-0" }, answered)).toBe(false);
    const unwatch = listenForStop(bus, "chat-1", { messageId: "u-2" }, () =>
      stopped.push("admitted"),
    );
    await settled();
    expect(stopped).toEqual(["admitted"]);
    await unwatch();
  });

  it("waits only moments: a turn the account sends once opened again runs", async () => {
    let now = 0;
    const bus = memoryBus(() => now);
    await requestStopOfAnyTurn(bus, "chat-1");
    now += 6_000;
    let stopped = 0;
    const unwatch = listenForStop(bus, "chat-1", { messageId: "u-1" }, () => stopped++);
    await settled();
    expect(stopped).toBe(0);
    await unwatch();
  });

  it("expires when no turn comes for it", async () => {
    let now = 0;
    const bus = memoryBus(() => now);
    await requestStopOfAnyTurn(bus, "chat-1");
    now += 31_000;
    let stopped = 0;
    const unwatch = listenForStop(bus, "chat-1", { messageId: "u-1" }, () => stopped++);
    await settled();
    expect(stopped).toBe(0);
    await unwatch();
  });
});

describe("a running turn looking for stops left for it", () => {
  it("is stopped by the one it finds, though the look for an admin's stop failed beside it", async () => {
    const bus = memoryBus();
    const turn = { messageId: "u-1", attemptId: "a-1" };
    expect(await requestStopOf(bus, "chat-1", turn, notAnswered)).toBe(true);
    const get = bus.publisher.get;
    bus.publisher.get = (key) =>
      key.startsWith("fold:stop-pending-any:")
        ? Promise.reject(new Error("the live bus's Redis did not answer in 2 s"))
        : get(key);
    let stopped = 0;
    const done = pollPendingStop(bus, "chat-1", turn, () => stopped++);
    await settled();
    await settled();
    expect(stopped).toBe(1);
    done();
  });

  it("finds a stop left after it started looking, on a later look", async () => {
    const bus = memoryBus();
    const turn = { messageId: "u-1", attemptId: "a-1" };
    let stopped = 0;
    const done = pollPendingStop(bus, "chat-1", turn, () => stopped++);
    await settled();
    expect(stopped).toBe(0);
    await bus.publisher.set("fold:stop-pending:chat-1:a-1", "u-1", { EX: 30 });
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(stopped).toBe(1);
    done();
  });
});
