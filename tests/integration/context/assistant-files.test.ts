import { afterAll, beforeEach, expect, it, vi } from "vitest";

const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({
    models: ["pglite", "pg"].map((d) => ({ id: `fake-model-${d}`, maxModelLen: 16_384 })),
    replyTokens: 20,
  });
});

import { eq } from "drizzle-orm";
import { type Database, withDatabase } from "@/lib/db/client";
import { appendMessage, loadHistory } from "@/lib/db/queries/messages";
import { compactionEvent } from "@/lib/db/schema";
import { inspectContextWindow } from "@/lib/model-window/window";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.configure({ chunkDelayMs: 0 });
});

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** Six turns whose replies each hold a generated picture, stored as a turn stores them. */
async function seedPictures(database: Database, chatId: string, ask: (i: number) => string) {
  for (let i = 0; i < 6; i++) {
    await appendMessage(database.db, chatId, {
      id: `u-${crypto.randomUUID()}`,
      role: "user",
      parts: [{ type: "text", text: ask(i) }],
      metadata: null,
    });
    await appendMessage(database.db, chatId, {
      id: `a-${crypto.randomUUID()}`,
      role: "assistant",
      parts: [
        { type: "step-start" },
        { type: "text", text: `Picture ${i}:` },
        { type: "file", mediaType: "image/png", url: `data:image/png;base64,${PNG}` },
      ],
      metadata: null,
    });
  }
}

/**
 * A chat whose earlier replies hold images another model generated (Gemini's image models
 * stream them as `file` parts), now continued on an OpenAI-compatible model. That provider
 * never sends an assistant message's files (nor do OpenAI's and Anthropic's), yet Fold's
 * estimate prices each at 1,000 tokens: DESIGN §5 counts "only what the model receives".
 */
describeEachDriver("images in earlier replies, on a model that is not sent them", (use, driver) => {
  // One model per driver: a window Fold learns is kept in memory for the process.
  const MODEL = `fake:fake-model-${driver}`;
  it("are not counted into the turn's input estimate", async () => {
    const database = use();
    const { browser } = await register(database, "img-estimate@example.com");
    const chatId = await newChat(database, browser);
    await seedPictures(database, chatId, (i) => `draw picture ${i}`);
    const { response } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Describe what you drew.",
    });
    expect(response.status).toBe(200);
    const sent = fake.requests.at(-1);
    expect(JSON.stringify(sent?.body)).toContain("Picture 0:");
    // The provider was sent no image at all.
    expect(JSON.stringify(sent)).not.toContain("image_url");
    const rows = await loadHistory(database.db, chatId);
    const metadata = rows.at(-1)?.metadata as { stats?: { estimatedInputTokens: number } } | null;
    const real = sent?.promptTokens ?? 0;
    // Within half again of the real count (the estimator's own tests hold it far tighter).
    expect(metadata?.stats?.estimatedInputTokens).toBeLessThan(real * 1.5);
  });

  it("do not make Fold think the server cut the prompt, nor shrink the model's window", async () => {
    const database = use();
    const { browser } = await register(database, "img-window@example.com");
    const chatId = await newChat(database, browser);
    // A chat about as long as a real one (the provider counts over 1,024 tokens), whose replies
    // hold a handful of generated images.
    await seedPictures(database, chatId, (i) => longMessage(i, 120));
    const { response, chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Describe what you drew.",
    });
    expect(response.status).toBe(200);
    const real = fake.requests.at(-1)?.promptTokens ?? 0;
    expect(real).toBeGreaterThan(1024);
    const events = await database.db
      .select()
      .from(compactionEvent)
      .where(eq(compactionEvent.chatId, chatId));
    expect(JSON.stringify(chunks)).not.toContain("truncated");
    expect(events.filter((e) => e.reason === "truncated")).toEqual([]);
    const { window } = await withDatabase(database, () =>
      inspectContextWindow("fake", `fake-model-${driver}`, database.db),
    );
    expect(window.contextWindow).toBe(16_384);
  });
});
