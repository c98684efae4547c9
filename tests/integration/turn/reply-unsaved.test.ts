import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible HTTP server, configured as Fold's provider before Fold loads.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({ models: [{ id: "fake-model", maxModelLen: 8192 }] });
});

import { loadHistory } from "@/lib/db/queries/messages";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive, whileInsertsRefused } from "../../helpers/db";
import { newChat, postRegenerate, postTurn } from "../../helpers/turns";
import { eventually, readChunks, textOf } from "../../helpers/ui-stream";

const MODEL = "fake:fake-model";

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.configure({ chunkDelayMs: 0 });
});

/**
 * The browser's stream ends once the reply is stored (lib/turn/run-turn.ts), and the page takes
 * that end to mean it is: a reply that could not be stored must not end like one. It ends with
 * an error saying so, which the page shows with Retry, and Retry then answers the same message.
 */
describeEachDriver("a reply that could not be stored", (use) => {
  it("ends the browser's stream with an error instead of a finish, and Retry answers it", async () => {
    const database = use();
    const { db } = database;
    const { browser } = await register(database, "unsaved@example.com");
    const chatId = await newChat(database, browser);

    let chunks: Awaited<ReturnType<typeof readChunks>> = [];
    await whileInsertsRefused(db, "message", "new.role = 'assistant'", async () => {
      const response = await postTurn(database, browser, { chatId, modelId: MODEL, text: "hi" });
      expect(response.status).toBe(200);
      chunks = await readChunks(response);
      await eventually(async () => !(await isTurnActive(db, chatId)));
    });

    // The reply's text reached the browser, its end did not: an error took its place.
    expect(textOf(chunks)).not.toBe("");
    expect(chunks.some((chunk) => chunk.type === "finish")).toBe(false);
    const last = chunks.at(-1);
    expect(last?.type).toBe("error");
    const errorText = (last as { errorText?: string }).errorText ?? "";
    expect(errorText).toMatch(/could not be saved/);
    expect(errorText).toMatch(/error id [0-9a-f]{12}/);
    expect((await loadHistory(db, chatId)).map((m) => m.role)).toEqual(["user"]);

    // Retry, as the page's button sends it: the same message is answered and stored.
    const retried = await postRegenerate(database, browser, { chatId, modelId: MODEL });
    expect(retried.status).toBe(200);
    const again = await readChunks(retried);
    expect(again.some((chunk) => chunk.type === "error")).toBe(false);
    expect(again.at(-1)?.type).toBe("finish");
    await eventually(async () => !(await isTurnActive(db, chatId)));
    expect((await loadHistory(db, chatId)).map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});
