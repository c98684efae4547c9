import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible HTTP server, configured as Fold's provider before Fold loads.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({ models: [{ id: "fake-model", maxModelLen: 32_768 }] });
});

import { traceEntry } from "@/lib/compaction/trace";
import type { Database } from "@/lib/db/client";
import { acquireLease, releaseLease } from "@/lib/db/queries/leases";
import { appendMessage, loadHistory } from "@/lib/db/queries/messages";
import { usageOn } from "@/lib/db/queries/usage";
import { usageDayOf } from "@/lib/limits/quota-day";
import { contentText } from "../../fixtures/fake-openai/request";
import { register, sessionOf } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import type { Browser } from "../../helpers/http";
import { newChat, postTurn, sendTurn } from "../../helpers/turns";
import { readChunks } from "../../helpers/ui-stream";

/**
 * One chat open in two tabs: a new message from the tab that did not see the other's newest
 * messages names the last one it showed (`throughId`), and is refused rather than answered
 * after messages that page never showed.
 */

const MODEL = "fake:fake-model";

afterAll(() => fake.close());
beforeEach(() => fake.reset());

/** Message ids are unique across chats: each test's are its own. */
const ids = () => {
  const tag = crypto.randomUUID().slice(0, 8);
  return (name: string) => `${name}-${tag}`;
};

const storedIds = async (database: Database, chatId: string) =>
  (await loadHistory(database.db, chatId)).map((m) => m.id);

/** A chat of one exchange (a1, its reply) as both tabs show it: the reply's id. */
async function openedInTwoTabs(
  database: Database,
  browser: Browser,
  id: (name: string) => string,
): Promise<[string, string]> {
  const chatId = await newChat(database, browser);
  const { response } = await sendTurn(database, browser, {
    chatId,
    modelId: MODEL,
    text: "Question one",
    id: id("a1"),
  });
  expect(response.status).toBe(200);
  const reply = (await loadHistory(database.db, chatId)).at(-1)?.id ?? "";
  return [chatId, reply];
}

describeEachDriver("a new message from a tab behind the chat", (use) => {
  it("is refused (409) when another tab went on since, storing, spending and sending nothing", async () => {
    const database = use();
    const id = ids();
    const { browser } = await register(database, "stale-tab@example.com");
    const userId = (await sessionOf(database, browser))?.user.id ?? "";
    const [chatId, lastShown] = await openedInTwoTabs(database, browser, id);
    // Tab B goes on.
    const b = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "TAB-B question",
      id: id("b1"),
    });
    expect(b.response.status).toBe(200);
    const requests = fake.requests.length;
    const day = await usageOn(database.db, userId, usageDayOf(new Date()));

    const refused = await postTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Tab A question two",
      id: id("a2"),
      throughId: lastShown,
    });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toEqual({
      code: "conflict:message",
      message: expect.stringMatching(/went on in another tab/),
    });
    expect(fake.requests).toHaveLength(requests);
    expect(await storedIds(database, chatId)).not.toContain(id("a2"));
    expect((await usageOn(database.db, userId, usageDayOf(new Date()))).messages).toBe(
      day.messages,
    );

    // Shown the chat as it is, the tab sends again: answered after B's turn.
    const b1Reply = (await loadHistory(database.db, chatId)).at(-1)?.id;
    const again = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Tab A question two",
      id: id("a2"),
      throughId: b1Reply,
    });
    expect(again.response.status).toBe(200);
    const prompt = (fake.requests.at(-1)?.messages ?? []).map(contentText).join("\n");
    expect(prompt).toContain("TAB-B question");
  });

  it("is answered when only a compaction's entry came after what the tab showed, or it names a reply never stored", async () => {
    const database = use();
    const id = ids();
    const { browser } = await register(database, "entries-tab@example.com");
    const [chatId, lastShown] = await openedInTwoTabs(database, browser, id);
    // A background compaction's entry, stored after the reply the tab shows.
    await appendMessage(
      database.db,
      chatId,
      traceEntry(
        {
          outcome: "summarized",
          reason: "background",
          tokensBefore: 100,
          tokensAfter: 50,
          savedPct: 50,
          messagesSummarized: 2,
          summarizerModel: null,
          durationMs: 5,
          summary: "",
          note: null,
        },
        { reason: "background", tokensBefore: 100, messages: 2, startedAt: Date.now() },
        { messageId: id("entry-1"), toolCallId: id("trace-1") },
      ),
    );
    const answered = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Next question",
      id: id("a2"),
      throughId: lastShown,
    });
    expect(answered.response.status).toBe(200);
    // A reply the page showed but the server never stored says nothing of where the chat is.
    const unknown = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "And another",
      id: id("a3"),
      throughId: "reply-never-stored",
    });
    expect(unknown.response.status).toBe(200);
    expect(await storedIds(database, chatId)).toEqual(expect.arrayContaining([id("a2"), id("a3")]));
  });

  it("is refused too when it waited for the other tab's turn to free the chat", async () => {
    const database = use();
    const id = ids();
    const { browser } = await register(database, "waiting-tab@example.com");
    const [chatId, lastShown] = await openedInTwoTabs(database, browser, id);
    // Tab B's turn holds the chat while tab A sends.
    const held = await acquireLease(database.db, chatId, 30_000);
    if (!held) throw new Error("the chat's lease was not free");
    const sent = postTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Tab A question two",
      id: id("a2"),
      throughId: lastShown,
    });
    await appendMessage(database.db, chatId, {
      id: id("b1"),
      role: "user",
      parts: [{ type: "text", text: "TAB-B question" }],
      metadata: null,
    });
    await releaseLease(database.db, held);
    const response = await sent;
    expect(response.status).toBe(409);
    if (response.ok) await readChunks(response);
    expect(await storedIds(database, chatId)).not.toContain(id("a2"));
  });
});
