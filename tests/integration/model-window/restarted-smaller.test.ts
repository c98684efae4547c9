import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A vLLM-like server serving one model at 32,768 tokens, until it is "restarted" with 8,192.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({ models: [{ id: "m", maxModelLen: 32_768 }], replyTokens: 60 });
});

import { evictContextWindow, resolveContextWindow } from "@/lib/model-window/window";
import { register } from "../../helpers/auth";
import { isSummaryRequest } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

const MODEL = "fake:m";

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.configure({ models: [{ id: "m", maxModelLen: 32_768 }] });
  // Each driver's run starts from the server as it first was, not the window the last one learned.
  evictContextWindow("fake", "m");
});

const errorOf = (chunks: readonly unknown[]) =>
  chunks.find((c) => (c as { type: string }).type === "error") as
    | { errorText?: string }
    | undefined;

describeEachDriver("a server restarted with a smaller context than Fold looked up", (use) => {
  it("answers the turn the server refuses, trimmed for the window it states, and budgets with that window next", async () => {
    const database = use();
    const { browser } = await register(database, `restarted-${crypto.randomUUID()}@example.com`);
    const chatId = await newChat(database, browser);
    // About 9,000 tokens: far under the 32,768 window's trigger, over 8,192.
    for (let turn = 0; turn < 8; turn++) {
      const { response } = await sendTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: longMessage(turn, 900),
      });
      expect(response.status).toBe(200);
    }
    expect((await resolveContextWindow("fake", "m", database.db)).contextWindow).toBe(32_768);

    fake.configure({ models: [{ id: "m", maxModelLen: 8192 }] });
    fake.reset();
    const { response, chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "A short question after the restart.",
    });

    expect(response.status).toBe(200);
    expect(errorOf(chunks)).toBeUndefined();
    expect(chunks.some((c) => (c as { type: string }).type === "text-delta")).toBe(true);
    // Refused once as too long, then answered trimmed within the window the server stated.
    const calls = fake.requests.filter((r) => !isSummaryRequest(r));
    expect(calls.map((r) => r.status)).toEqual([400, 200]);
    expect(calls[1]?.promptTokens).toBeLessThan(8192);
    const trace = JSON.stringify(chunks);
    expect(trace).toContain("window is 8,192 tokens");
    // The window is looked up again: the next message budgets with what the server says now.
    expect((await resolveContextWindow("fake", "m", database.db)).contextWindow).toBe(8192);
    fake.reset();
    const next = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: longMessage(9, 900),
    });
    expect(next.response.status).toBe(200);
    expect(errorOf(next.chunks)).toBeUndefined();
    expect(fake.requests.filter((r) => !isSummaryRequest(r)).map((r) => r.status)).toEqual([200]);
  });
});
