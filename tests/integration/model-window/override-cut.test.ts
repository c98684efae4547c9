import { afterAll, expect, it, vi } from "vitest";

// An Ollama server running the model at 4,096 tokens and cutting longer prompts silently.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({
    flavor: "ollama",
    truncatePrompts: true,
    models: [{ id: "llama3.1:8b", maxModelLen: 4096, trainedContext: 131_072 }],
    replyTokens: 60,
  });
});

import { upsertOverride } from "@/lib/db/queries/model-overrides";
import { evictContextWindow } from "@/lib/model-window/window";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

const MODEL = "llama3.1:8b";

afterAll(() => fake.close());

type TraceOutput = { reason?: string; outcome?: string; note?: string };

describeEachDriver("an admin's override larger than the context the server runs", (use) => {
  it("a silent cut says the override is kept and where to change it, never that Fold now uses less", async () => {
    const database = use();
    await upsertOverride(database.db, {
      provider: "fake",
      model: MODEL,
      contextWindow: 32_768,
      maxOutputTokens: null,
      updatedBy: null,
    });
    evictContextWindow("fake", MODEL);
    const { browser } = await register(database, `override-cut-${crypto.randomUUID()}@example.com`);
    const chatId = await newChat(database, browser);
    let note: string | undefined;
    for (let turn = 0; turn < 8 && note === undefined; turn++) {
      const { chunks } = await sendTurn(database, browser, {
        chatId,
        modelId: `fake:${MODEL}`,
        text: longMessage(turn, 500),
      });
      note = chunks
        .map((c) => c.output as TraceOutput | undefined)
        .find((o) => o?.reason === "truncated" && o.outcome === "skipped")?.note;
    }
    expect(note).toContain("32,768 tokens an admin's override in Admin → Models sets");
    expect(note).toContain("lower or remove it there");
    expect(note).not.toContain("Fold now uses");
  });
});
