import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A provider that can hang, a one-second idle deadline and a four-second wait for an answer to
// begin, set before Fold loads.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(
    { models: [{ id: "fake-model", maxModelLen: 8192 }] },
    {
      TURN_IDLE_TIMEOUT_MS: "1000",
      TURN_FIRST_TOKEN_TIMEOUT_MS: "4000",
    },
  );
});

import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { newChat, sendTurn } from "../../helpers/turns";

const MODEL = "fake:fake-model";

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.configure({ chunkDelayMs: 0 });
});

const textOf = (chunks: Array<Record<string, unknown>>) =>
  chunks
    .filter((c) => c.type === "text-delta")
    .map((c) => c.delta)
    .join("");

describeEachDriver("a provider that hangs", (use) => {
  it("is stopped when it does not begin answering in time, with a clear message, and the chat is usable at once", async () => {
    const database = use();
    const { browser } = await register(database, "hang@example.com");
    const chatId = await newChat(database, browser);
    fake.script({ fault: "slow", delayMs: 20_000, text: "far too late" });

    const started = Date.now();
    const hung = await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Hello?" });
    expect(hung.response.status).toBe(200);
    const errors = hung.chunks.filter((c) => c.type === "error");
    expect(errors.map((c) => c.errorText)).toEqual([
      expect.stringMatching(/model did not begin answering within 4 s/),
    ]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await isTurnActive(database.db, chatId)).toBe(false);

    fake.script({ text: "Here now." });
    const next = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Still there?",
    });
    expect(next.response.status).toBe(200);
    const text = next.chunks
      .filter((c) => c.type === "text-delta")
      .map((c) => c.delta)
      .join("");
    expect(text).toBe("Here now.");
  });

  it("is waited for while it loads or reads the prompt, longer than it may pause once answering", async () => {
    const database = use();
    const { browser } = await register(database, "slow-start@example.com");
    const chatId = await newChat(database, browser);
    fake.script({ fault: "slow", delayMs: 2_000, text: "Loaded and answering." });
    const turn = await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Hi" });
    expect(turn.chunks.filter((c) => c.type === "error")).toEqual([]);
    expect(textOf(turn.chunks)).toBe("Loaded and answering.");
  });

  it("is stopped when it goes quiet for the idle time once it has begun", async () => {
    const database = use();
    const { browser } = await register(database, "stall@example.com");
    const chatId = await newChat(database, browser);
    fake.configure({ chunkDelayMs: 2_500 });
    fake.script({ text: "A reply that stalls between its chunks." });
    const turn = await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Go on" });
    expect(turn.chunks.filter((c) => c.type === "error").map((c) => c.errorText)).toEqual([
      expect.stringMatching(/model stopped responding \(nothing for 1 s\)/),
    ]);
    expect(await isTurnActive(database.db, chatId)).toBe(false);
  });
});
