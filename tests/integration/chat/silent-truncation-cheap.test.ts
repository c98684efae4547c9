import { afterAll, beforeAll, expect, it, vi } from "vitest";

// A model served through an OpenAI-compatible server that counts its prompts with Gemma 3's
// own tokenizer, which spends ≈ 0.6 tokens per o200k token on emoji.
const server = await vi.hoisted(async () => {
  const { startFakeOpenAI } = await import("../../fixtures/fake-openai/server");
  const fake = await startFakeOpenAI({
    models: [{ id: "gemma-3", maxModelLen: 131_072, tokenizer: "gemma3" }],
    replyTokens: 40,
  });
  process.env.OPENAI_COMPATIBLE_BASE_URL = fake.url;
  process.env.OPENAI_COMPATIBLE_NAME = "local";
  process.env.DEMO_MODEL = "never";
  return fake;
});

import { countTextTokens } from "@/lib/context/tokens";
import { getObservedWindow } from "@/lib/db/queries/observed-windows";
import { compactionEvent } from "@/lib/db/schema";
import { windowResolver } from "@/lib/model-window/window";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import type { Browser } from "../../helpers/http";
import { newChat, sendTurn } from "../../helpers/turns";

afterAll(async () => {
  await server.close();
});

/** A message of emoji reactions, about 2,000 o200k tokens. */
const EMOJI_LINE = "🎉🔥👍🏽😀🚀🇹🇭🇯🇵❤️✨🙏🏻💡📈🧪🌏 ";

describeEachDriver("a model that counts some content far below o200k", (use) => {
  let browser: Browser;

  beforeAll(async () => {
    windowResolver().clear();
    ({ browser } = await register(use(), "cheap@example.com"));
  });

  it("is answered, and its fair count on a first turn is not taken for a silent cut", async () => {
    const database = use();
    const chatId = await newChat(database, browser);
    const text = EMOJI_LINE.repeat(60);
    expect(countTextTokens(text)).toBeGreaterThan(1_500);
    const from = server.requests.length;
    const { response, chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: "local:gemma-3",
      text,
    });
    expect(response.ok).toBe(true);
    expect(chunks.filter((c) => c.type === "error")).toEqual([]);
    // The premise: the server counted the whole request (Fold's instructions and tools with the
    // message) as fewer tokens than o200k counts the message alone.
    const [request] = server.requests.slice(from);
    expect(request?.promptTokens).toBeLessThan(countTextTokens(text));
    // No window was learned from it, and nothing was recorded as cut.
    expect(await getObservedWindow(database.db, "local", "gemma-3")).toBeNull();
    const events = await database.db.select().from(compactionEvent);
    expect(events.filter((e) => e.reason === "truncated")).toEqual([]);
  });
});
