import { afterAll, beforeEach, expect, it, vi } from "vitest";

// Compaction off: a turn sends every old tool result whole, and the ring must say so.
const { fake, pages } = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  const { startPageServer } = await import("../../helpers/page-server");
  const server = await startFakeProvider(
    { models: [{ id: "big", maxModelLen: 65536, tokenScale: 1 }], replyTokens: 60 },
    { COMPACTION_ENABLED: "false", FETCH_URL_ALLOW_PRIVATE: "1", COMPACTION_BULKY_RATIO: "0.01" },
  );
  const words = ["river", "mountain", "archive", "ledger", "harbor", "signal", "orchard", "copper"];
  const pages = await startPageServer((path) => {
    const n = Number(/\/page\/(\d+)/.exec(path)?.[1] ?? 0);
    const lines: string[] = [];
    for (let p = 0; lines.join("\n").length < 8_000; p++) {
      lines.push(
        `Page ${n} line ${p}: ${Array.from({ length: 20 }, (_, i) => `${words[(i + p + n) % words.length]}${(i * 7 + p + n) % 89}`).join(" ")}.`,
      );
    }
    return { body: lines.join("\n"), contentType: "text/plain; charset=utf-8" };
  });
  return { fake: server, pages };
});

import { register } from "../../helpers/auth";
import { contextOf } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { newChat, sendTurn } from "../../helpers/turns";

afterAll(async () => {
  await fake.close();
  await pages.close();
});
beforeEach(() => fake.reset());

describeEachDriver("the context ring with COMPACTION_ENABLED=false", (use) => {
  it("projects what the next turn sends: old tool results whole, not as a turn with compaction on would cut them", async () => {
    const database = use();
    const MODEL = "fake:big";
    const { browser } = await register(database, "ring-off@example.com");
    const chatId = await newChat(database, browser);
    const FETCHES = 6;
    fake.script(
      ...Array.from({ length: FETCHES }, (_, i) => ({
        toolCalls: [{ name: "fetch_url", arguments: { url: `${pages.url}/page/${i}` } }],
      })),
      { text: "Done reading." },
    );
    const first = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Read six pages.",
    });
    expect(first.response.status).toBe(200);
    const ring = await contextOf(database, browser, chatId, MODEL);
    const before = fake.requests.length;
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Ok?" });
    const sent = fake.requests.slice(before).filter((r) => r.status === 200)[0];
    // Not below the request the next turn sent (by more than the estimate's own margin).
    expect(ring.projectedTokens).toBeGreaterThan((sent?.promptTokens ?? 0) * 0.9);
  });
});
