import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible HTTP server, configured as Fold's provider before Fold loads.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({ models: [{ id: "fake-model", maxModelLen: 32_768 }] });
});

import { upsertOverride } from "@/lib/db/queries/model-overrides";
import { evictContextWindow } from "@/lib/model-window/window";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { newChat, sendTurn } from "../../helpers/turns";

const MODEL = "fake:fake-model";

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  // Windows are cached per process: each database starts from what it holds.
  evictContextWindow("fake", "fake-model");
});

/** The output limit the last chat request to the provider asked for, if any. */
function lastMaxTokens(): unknown {
  const body = fake.requests.at(-1)?.body ?? {};
  return body.max_tokens ?? body.max_completion_tokens;
}

describeEachDriver("the reply's output limit", (use) => {
  it("goes to the provider when one is known (an admin's override), as the room Fold kept for it", async () => {
    const database = use();
    const { browser } = await register(database, "output-limit@example.com");
    const chatId = await newChat(database, browser);

    // The fake server lists a window and no output limit: the provider's default stands.
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "First question." });
    expect(lastMaxTokens()).toBeUndefined();

    await upsertOverride(database.db, {
      provider: "fake",
      model: "fake-model",
      contextWindow: null,
      maxOutputTokens: 2_000,
      updatedBy: null,
    });
    evictContextWindow("fake", "fake-model");
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Second question." });
    expect(lastMaxTokens()).toBe(2_000);
  });
});
