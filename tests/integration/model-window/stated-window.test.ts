import { afterAll, beforeEach, expect, it, vi } from "vitest";

// llama.cpp serving gpt-oss-20b with an 8,192-token context, behind a proxy that passes on only
// /v1: its /props is out of reach, and Fold's lookup falls to the catalog's 128,000.
const setup = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  const { startV1OnlyProxy } = await import("../../helpers/v1-proxy");
  const fake = await startFakeProvider({
    flavor: "llama.cpp",
    models: [{ id: "gpt-oss-20b", maxModelLen: 8192 }],
    replyTokens: 60,
  });
  const proxy = await startV1OnlyProxy(fake.url);
  process.env.OPENAI_COMPATIBLE_BASE_URL = proxy.url;
  return { fake, proxy };
});

import { upsertOverride } from "@/lib/db/queries/model-overrides";
import { resolveContextWindow, windowResolver } from "@/lib/model-window/window";
import { register } from "../../helpers/auth";
import { isSummaryRequest } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

const MODEL = "fake:gpt-oss-20b";
const { fake, proxy } = setup;

afterAll(async () => {
  await proxy.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  windowResolver().clear();
});

describeEachDriver("a window the server states when it refuses a prompt", (use) => {
  it("is kept: once the server said 8,192, later turns budget with it and are not refused again", async () => {
    const database = use();
    const { browser } = await register(database, `stated-${crypto.randomUUID()}@example.com`);
    const chatId = await newChat(database, browser);
    expect((await resolveContextWindow("fake", "gpt-oss-20b", database.db)).contextWindow).toBe(
      128_000,
    );
    const calls: number[][] = [];
    for (let turn = 0; turn < 12; turn++) {
      fake.reset();
      const { response } = await sendTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: longMessage(turn, 900),
      });
      expect(response.status).toBe(200);
      calls.push(fake.requests.filter((r) => !isSummaryRequest(r)).map((r) => r.status));
    }
    // Refused once as too long (then answered trimmed), never again after.
    const refused = calls.findIndex((statuses) => statuses.includes(400));
    expect(refused).toBeGreaterThanOrEqual(0);
    expect(calls[refused]).toEqual([400, 200]);
    expect(calls.slice(refused + 1)).toEqual(calls.slice(refused + 1).map(() => [200]));
    const window = await resolveContextWindow("fake", "gpt-oss-20b", database.db);
    expect(window.contextWindow).toBe(8192);
    expect(window.source).toBe("observed");
  });

  it("under an admin's override, is not taken over it, and the note says the override stands", async () => {
    const database = use();
    await upsertOverride(database.db, {
      provider: "fake",
      model: "gpt-oss-20b",
      contextWindow: 64_000,
    });
    const { browser } = await register(database, `stated-over-${crypto.randomUUID()}@example.com`);
    const chatId = await newChat(database, browser);
    let note = "";
    for (let turn = 0; turn < 12 && !note; turn++) {
      const { response, chunks } = await sendTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: longMessage(turn, 900),
      });
      expect(response.status).toBe(200);
      const trace = JSON.stringify(chunks);
      if (trace.includes("window is 8,192 tokens")) note = trace;
    }
    expect(note).toContain("less than the 64,000 an admin's override in Admin → Models sets");
    expect(note).toContain("Fold keeps the override");
    const window = await resolveContextWindow("fake", "gpt-oss-20b", database.db);
    expect(window.source).toBe("override");
    expect(window.contextWindow).toBe(64_000);
  });
});
