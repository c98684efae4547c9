import { expect, it } from "vitest";
import * as chatRoute from "@/app/api/chats/[id]/route";
import * as chatsRoute from "@/app/api/chats/route";
import { PAGE_DEFAULT_LIMIT, PAGE_MAX_LIMIT } from "@/lib/chat/schemas";
import type { Database } from "@/lib/db/client";
import { message } from "@/lib/db/schema";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { type Browser, call } from "../../helpers/http";

const MESSAGES = 130;
const CHATS = 7;

type MessagesJson = { messages: Array<{ id: string }>; hasMore: boolean };
type ChatsJson = { chats: Array<{ id: string; title: string }>; hasMore: boolean };

async function messagesPage(database: Database, browser: Browser, chatId: string, query = "") {
  return call(database, chatRoute.GET, {
    path: `/api/chats/${chatId}${query}`,
    params: { id: chatId },
    browser,
  });
}

async function chatsPage(database: Database, browser: Browser, query = "") {
  return call(database, chatsRoute.GET, { path: `/api/chats${query}`, browser });
}

describeEachDriver("paging messages and chats", (use) => {
  let browser: Browser;
  let chatId: string;
  let other: Browser;
  const ids = Array.from({ length: MESSAGES }, (_, i) => `m-${String(i).padStart(4, "0")}`);
  const titles = Array.from({ length: CHATS }, (_, i) => `chat ${i}`);
  const chatIds: string[] = [];

  it("seeds a user with a long chat and several chats", async () => {
    const database = use();
    browser = (await register(database, "pager@example.com")).browser;
    other = (await register(database, "other@example.com")).browser;
    for (const title of titles) {
      const created = await call(database, chatsRoute.POST, {
        path: "/api/chats",
        method: "POST",
        body: { title },
        browser,
      });
      chatIds.push(((await created.json()) as { chat: { id: string } }).chat.id);
    }
    chatId = chatIds[0] ?? "";
    await database.db.insert(message).values(
      ids.map((id, seq) => ({
        id,
        chatId,
        seq,
        role: seq % 2 === 0 ? ("user" as const) : ("assistant" as const),
        parts: [{ type: "text", text: `message ${seq}` }],
      })),
    );
  });

  it("returns the newest page of messages first, oldest first within it", async () => {
    const response = await messagesPage(use(), browser, chatId);
    expect(response.status).toBe(200);
    const page = (await response.json()) as MessagesJson;
    expect(page.messages.map((m) => m.id)).toEqual(ids.slice(-PAGE_DEFAULT_LIMIT));
    expect(page.hasMore).toBe(true);
  });

  it("walks back through every message with ?before= and ends with hasMore false", async () => {
    const database = use();
    const seen: string[] = [];
    let before: string | undefined;
    for (let round = 0; round < 10; round++) {
      const query = `?limit=40${before ? `&before=${before}` : ""}`;
      const page = (await (
        await messagesPage(database, browser, chatId, query)
      ).json()) as MessagesJson;
      seen.unshift(...page.messages.map((m) => m.id));
      if (!page.hasMore) break;
      before = page.messages[0]?.id;
    }
    expect(seen).toEqual(ids);
  });

  it("answers 400 for a cursor that is not a message of the chat, or a bad limit", async () => {
    const database = use();
    const otherChat = chatIds[1] ?? "";
    for (const [query, why] of [
      ["?before=nope", /before is not a message of this chat/],
      // A real message, but of another chat.
      [`?before=${ids[5]}`, /before is not a message of this chat/],
      ["?limit=0", /at least 1/],
      [`?limit=${PAGE_MAX_LIMIT + 1}`, /at most/],
      ["?limit=ten", /whole number/],
      ["?page=2", /./],
    ] as const) {
      const target = query.startsWith("?before=m-") ? otherChat : chatId;
      const response = await messagesPage(database, browser, target, query);
      expect(response.status, query).toBe(400);
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message, query).toMatch(why);
    }
  });

  it("pages the chat list, most recently active first", async () => {
    const database = use();
    const first = (await (await chatsPage(database, browser, "?limit=3")).json()) as ChatsJson;
    expect(first.chats.map((c) => c.title)).toEqual([...titles].reverse().slice(0, 3));
    expect(first.hasMore).toBe(true);
    const seen = [...first.chats];
    let page = first;
    while (page.hasMore) {
      const before = page.chats[page.chats.length - 1]?.id;
      page = (await (
        await chatsPage(database, browser, `?limit=3&before=${before}`)
      ).json()) as ChatsJson;
      seen.push(...page.chats);
    }
    expect(seen.map((c) => c.title)).toEqual([...titles].reverse());
  });

  it("answers 400 for a chat cursor that is malformed or someone else's chat", async () => {
    const database = use();
    const created = await call(database, chatsRoute.POST, {
      path: "/api/chats",
      method: "POST",
      body: { title: "theirs" },
      browser: other,
    });
    const theirs = ((await created.json()) as { chat: { id: string } }).chat.id;
    for (const [query, why] of [
      ["?before=not-a-uuid", /before must be a chat id/],
      [`?before=${theirs}`, /before is not one of your chats/],
      ["?limit=-1", /whole number/],
    ] as const) {
      const response = await chatsPage(database, browser, query);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
        why,
      );
    }
  });
});
