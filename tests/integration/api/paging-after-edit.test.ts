import { afterAll, beforeEach, expect, it, vi } from "vitest";

const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, { COMPACTION_BACKGROUND: "false" });
});

import * as chatRoute from "@/app/api/chats/[id]/route";
import { loadHistory } from "@/lib/db/queries/messages";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { call } from "../../helpers/http";
import { newChat, sendTurn } from "../../helpers/turns";

const MODEL = "fake:small";
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describeEachDriver("two tabs: scrolling up after another tab rewrote the chat", (use) => {
  it("a page cursor taken away by another tab's edit answers 409 (the chat changed), not 400", async () => {
    const database = use();
    const { browser } = await register(database, "cursor-edit@example.com");
    const chatId = await newChat(database, browser);
    for (let i = 0; i < 3; i++) {
      await sendTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: `question ${i}`,
        id: `u${i}`,
      });
    }
    // Tab A opened the chat on its newest page (two messages): its oldest loaded is u2.
    const opened = await call(database, chatRoute.GET, {
      path: `/api/chats/${chatId}?limit=2`,
      params: { id: chatId },
      browser,
    });
    const page = (await opened.json()) as { messages: Array<{ id: string }> };
    const oldest = page.messages[0]?.id;
    expect(oldest).toBe("u2");
    // Tab B edits u1: u2 and what follows go to an earlier version.
    await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "question 1, edited",
      id: "u1",
    });
    expect((await loadHistory(database.db, chatId)).some((m) => m.id === "u2")).toBe(false);
    // Tab A scrolls up.
    const older = await call(database, chatRoute.GET, {
      path: `/api/chats/${chatId}?before=${oldest}&limit=2`,
      params: { id: chatId },
      browser,
    });
    const body = (await older.json()) as { error?: { code: string; message: string } };
    expect({ status: older.status, code: body.error?.code }).toEqual({
      status: 409,
      code: "conflict:history",
    });
    expect(body.error?.message).toMatch(/Reload it/);
  });
});
