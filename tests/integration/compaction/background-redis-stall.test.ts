import { afterAll, beforeEach, expect, it, vi } from "vitest";

// Redis behind a proxy that can stall (a paused Redis, a network dropping packets), the
// small-window provider that also answers as the summarizer, background compaction on.
const { fake, proxy } = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  const { startStallingRedis } = await import("../../helpers/stalling-proxy");
  const proxy = await startStallingRedis();
  const fake = await startFakeProvider(SMALL_WINDOW, {
    COMPACTION_BACKGROUND: "true",
    REDIS_URL: proxy.url,
  });
  return { fake, proxy };
});

import { listCompactionEvents } from "@/lib/db/queries/compaction-events";
import { register } from "../../helpers/auth";
import { fillUntil } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { isCompactingNow } from "../../helpers/db";
import { newChat } from "../../helpers/turns";
import { eventually } from "../../helpers/ui-stream";

const MODEL = "fake:small";
const SUMMARY_MS = 4_000;

afterAll(async () => {
  await proxy.close();
  await fake.close();
});
beforeEach(() => fake.reset());

describeEachDriver("a background compaction while Redis stops answering", (use, driver) => {
  it("frees the chat's compaction lease when it ends, though its stop channel cannot be left", async () => {
    const database = use();
    const { browser } = await register(database, `bg-redis-${driver}@example.com`);
    const chatId = await newChat(database, browser);
    fake.configure({ summaryDelayMs: SUMMARY_MS });
    try {
      // Until a reply ends with a background compaction running (listening on Redis).
      await fillUntil("due", database, browser, chatId, MODEL);
      expect(await isCompactingNow(database.db, chatId)).toBe(true);
      // Redis stops answering while the summarizer writes ("chats go on", README).
      proxy.stall();
      // The summarizer answers after SUMMARY_MS; its fold commits to Postgres.
      await eventually(
        async () => (await listCompactionEvents(database.db, chatId)).length > 0,
        20_000,
      );
      // Its lease is freed once it ends, well within the lease's 30 s term: not renewed for as
      // long as the process runs.
      await eventually(async () => !(await isCompactingNow(database.db, chatId)), 15_000);
    } finally {
      fake.configure({ summaryDelayMs: 0 });
      proxy.recover();
    }
  }, 60_000);
});
