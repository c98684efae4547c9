import { eq, sql } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";

// Something can happen just before a page is read (the chat deleted after the route found it).
const paging = vi.hoisted(() => ({ before: undefined as (() => Promise<void>) | undefined }));
vi.mock("@/lib/db/queries/messages", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/db/queries/messages")>();
  return {
    ...actual,
    loadMessagePage: async (...args: Parameters<typeof actual.loadMessagePage>) => {
      const before = paging.before;
      paging.before = undefined;
      await before?.();
      return actual.loadMessagePage(...args);
    },
  };
});

import * as chatRoute from "@/app/api/chats/[id]/route";
import * as chatsRoute from "@/app/api/chats/route";
import { PAGE_DEFAULT_LIMIT, PAGE_MAX_LIMIT } from "@/lib/chat/schemas";
import type { Database } from "@/lib/db/client";
import { chat, message, user } from "@/lib/db/schema";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { type Browser, call } from "../../helpers/http";

const MESSAGES = 130;
const CHATS = 7;

type MessagesJson = { messages: Array<{ id: string }>; hasMore: boolean };
type ChatJson = { id: string; title: string; updatedAt: string; createdAt: string };
type ChatsJson = { chats: ChatJson[]; hasMore: boolean };

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

/** The query for the page after `last`, from its values as listed (what the sidebar sends). */
function queryAfter(last: ChatJson | undefined, limit: number): string {
  if (!last) throw new Error("no chat to page after");
  const { id: before, updatedAt, createdAt } = last;
  return `?${new URLSearchParams({ before, updatedAt, createdAt, limit: String(limit) })}`;
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

  it("answers 404 when the chat is deleted as an older page is read", async () => {
    const database = use();
    const created = await call(database, chatsRoute.POST, {
      path: "/api/chats",
      method: "POST",
      body: { title: "doomed" },
      browser,
    });
    const doomed = ((await created.json()) as { chat: { id: string } }).chat.id;
    await database.db.insert(message).values(
      ["d-0", "d-1"].map((id, seq) => ({
        id,
        chatId: doomed,
        seq,
        role: seq === 0 ? ("user" as const) : ("assistant" as const),
        parts: [{ type: "text", text: `doomed ${seq}` }],
      })),
    );
    paging.before = async () => {
      await database.db.delete(chat).where(eq(chat.id, doomed));
    };
    const response = await messagesPage(database, browser, doomed, "?before=d-1");
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { code: string } };
    expect(body.error.code).toBe("not_found:chat");
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

  describe("a cursor of the listed chat's own values", () => {
    let mover: Browser;
    const moverTitles = Array.from({ length: 6 }, (_, i) => `mover ${i}`);

    async function listAll(database: Database, first: string): Promise<ChatsJson> {
      return (await (await chatsPage(database, mover, first)).json()) as ChatsJson;
    }

    it("seeds a user with six chats", async () => {
      const database = use();
      mover = (await register(database, "mover@example.com")).browser;
      for (const title of moverTitles) {
        await call(database, chatsRoute.POST, {
          path: "/api/chats",
          method: "POST",
          body: { title },
          browser: mover,
        });
      }
    });

    it("pages on after that chat was moved up by a reply", async () => {
      const database = use();
      const first = await listAll(database, "?limit=2");
      expect(first.chats.map((c) => c.title)).toEqual(["mover 5", "mover 4"]);
      const last = first.chats.at(-1);
      // Another tab renames it (as a reply would): it is now the most recently active chat.
      await call(database, chatRoute.PATCH, {
        path: `/api/chats/${last?.id}`,
        method: "PATCH",
        body: { title: "mover 4 renamed" },
        params: { id: last?.id ?? "" },
        browser: mover,
      });
      const response = await chatsPage(database, mover, queryAfter(last, 2));
      expect(response.status).toBe(200);
      const page = (await response.json()) as ChatsJson;
      expect(page.chats.map((c) => c.title)).toEqual(["mover 3", "mover 2"]);
      expect(page.hasMore).toBe(true);
    });

    it("pages on after that chat was deleted", async () => {
      const database = use();
      const first = await listAll(database, "?limit=3");
      expect(first.chats.map((c) => c.title)).toEqual(["mover 4 renamed", "mover 5", "mover 3"]);
      const last = first.chats.at(-1);
      await call(database, chatRoute.DELETE, {
        path: `/api/chats/${last?.id}`,
        method: "DELETE",
        params: { id: last?.id ?? "" },
        browser: mover,
      });
      const response = await chatsPage(database, mover, queryAfter(last, 3));
      expect(response.status).toBe(200);
      const page = (await response.json()) as ChatsJson;
      expect(page.chats.map((c) => c.title)).toEqual(["mover 2", "mover 1", "mover 0"]);
      expect(page.hasMore).toBe(false);
    });

    it("keeps chats apart that were active within the same millisecond", async () => {
      const database = use();
      const [owner] = await database.db
        .select({ id: user.id })
        .from(user)
        .where(eq(user.email, "mover@example.com"));
      const at = (micros: number) => sql`${`2001-02-03T04:05:06.000${micros}00Z`}::timestamptz`;
      await database.db.insert(chat).values(
        [3, 2, 1].map((micros) => ({
          userId: owner?.id ?? "",
          title: `same millisecond ${micros}`,
          createdAt: at(micros),
          updatedAt: at(micros),
        })),
      );
      const seen: ChatJson[] = [];
      let query = "?limit=1";
      for (let round = 0; round < 10; round++) {
        const page = await listAll(database, query);
        seen.push(...page.chats);
        if (!page.hasMore) break;
        query = queryAfter(page.chats.at(-1), 1);
      }
      const oldest = seen.slice(-3);
      expect(oldest.map((c) => c.title)).toEqual([
        "same millisecond 3",
        "same millisecond 2",
        "same millisecond 1",
      ]);
      expect(oldest[0]?.updatedAt).toBe("2001-02-03T04:05:06.000300Z");
    });

    it("answers 400, never 500, for values that are malformed, half there or without before", async () => {
      const database = use();
      const { chats } = await listAll(database, "?limit=1");
      const id = chats[0]?.id ?? "";
      const time = "2024-05-06T07:08:09.123456Z";
      for (const [query, why] of [
        [`?before=${id}&updatedAt=${time}`, /updatedAt and createdAt go together/],
        [`?before=${id}&createdAt=${time}`, /updatedAt and createdAt go together/],
        [`?updatedAt=${time}&createdAt=${time}`, /need before/],
        [`?before=${id}&updatedAt=yesterday&createdAt=${time}`, /updatedAt must be a UTC ISO/],
        [`?before=${id}&updatedAt=${time}&createdAt=2024-02-30T00:00:00Z`, /createdAt must be/],
        [`?before=${id}&updatedAt=0000-01-01T00:00:00Z&createdAt=${time}`, /updatedAt must be/],
        [`?before=${id}&updatedAt=2024-05-06T07:08:09.1234567Z&createdAt=${time}`, /updatedAt/],
        [`?before=${id}&updatedAt=2024-05-06T07:08:09%2B02:00&createdAt=${time}`, /updatedAt/],
        [`?before=nope&updatedAt=${time}&createdAt=${time}`, /before must be a chat id/],
      ] as const) {
        const response = await chatsPage(database, mover, query);
        expect(response.status, query).toBe(400);
        const body = (await response.json()) as { error: { message: string } };
        expect(body.error.message, query).toMatch(why);
      }
    });
  });
});
