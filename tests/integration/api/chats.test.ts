import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import * as contextRoute from "@/app/api/chats/[id]/context/route";
import * as chatRoute from "@/app/api/chats/[id]/route";
import * as stopRoute from "@/app/api/chats/[id]/stop/route";
import * as chatsRoute from "@/app/api/chats/route";
import * as healthRoute from "@/app/api/health/route";
import { TITLE_MAX_CHARS } from "@/lib/chat/schemas";
import type { Database } from "@/lib/db/client";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { anonymous, type Browser, call } from "../../helpers/http";

type ChatJson = { id: string; title: string; modelId: string | null };

async function listTitles(database: Database, browser: Browser) {
  const response = await call(database, chatsRoute.GET, { path: "/api/chats", browser });
  return ((await response.json()) as { chats: ChatJson[] }).chats.map((c) => c.title);
}

describeEachDriver("chats API", (use) => {
  let browser: Browser;

  it("creates, lists, renames and deletes a chat", async () => {
    const database = use();
    browser = (await register(database, "carol@example.com")).browser;

    const created = await call(database, chatsRoute.POST, {
      path: "/api/chats",
      method: "POST",
      body: {},
      browser,
    });
    expect(created.status).toBe(201);
    const { chat } = (await created.json()) as { chat: ChatJson };
    expect(chat.title).toBe("New chat");
    expect(await listTitles(database, browser)).toEqual(["New chat"]);

    const renamed = await call(database, chatRoute.PATCH, {
      path: `/api/chats/${chat.id}`,
      method: "PATCH",
      body: { title: "  Trip planning  " },
      params: { id: chat.id },
      browser,
    });
    expect(renamed.status).toBe(200);
    expect(await listTitles(database, browser)).toEqual(["Trip planning"]);

    const fetched = await call(database, chatRoute.GET, {
      path: `/api/chats/${chat.id}`,
      params: { id: chat.id },
      browser,
    });
    expect(await fetched.json()).toMatchObject({
      chat: { id: chat.id, title: "Trip planning" },
      messages: [],
    });

    const deleted = await call(database, chatRoute.DELETE, {
      path: `/api/chats/${chat.id}`,
      method: "DELETE",
      params: { id: chat.id },
      browser,
    });
    expect(deleted.status).toBe(204);
    expect(await listTitles(database, browser)).toEqual([]);
    const gone = await call(database, chatRoute.GET, {
      path: `/api/chats/${chat.id}`,
      params: { id: chat.id },
      browser,
    });
    expect(gone.status).toBe(404);
  });

  it("lists the most recently updated chat first", async () => {
    const database = use();
    for (const title of ["first", "second"]) {
      await call(database, chatsRoute.POST, {
        path: "/api/chats",
        method: "POST",
        body: { title },
        browser,
      });
    }
    expect(await listTitles(database, browser)).toEqual(["second", "first"]);
  });

  it("rejects bad input with a clear 4xx and writes nothing", async () => {
    const database = use();
    const before = await listTitles(database, browser);
    const created = await call(database, chatsRoute.POST, {
      path: "/api/chats",
      method: "POST",
      body: { title: "keep me" },
      browser,
    });
    const { chat } = (await created.json()) as { chat: ChatJson };
    const after = await listTitles(database, browser);

    const cases: Array<{
      name: string;
      status: number;
      message: RegExp;
      send: () => Promise<Response>;
    }> = [
      {
        name: "malformed JSON",
        status: 400,
        message: /not valid JSON/,
        send: () =>
          call(database, chatsRoute.POST, {
            path: "/api/chats",
            method: "POST",
            rawBody: "{title:",
            browser,
          }),
      },
      {
        name: "wrong type",
        status: 400,
        message: /title must be a string/,
        send: () =>
          call(database, chatsRoute.POST, {
            path: "/api/chats",
            method: "POST",
            body: { title: 42 },
            browser,
          }),
      },
      {
        name: "oversized title",
        status: 400,
        message: new RegExp(`at most ${TITLE_MAX_CHARS}`),
        send: () =>
          call(database, chatsRoute.POST, {
            path: "/api/chats",
            method: "POST",
            body: { title: "x".repeat(TITLE_MAX_CHARS + 1) },
            browser,
          }),
      },
      {
        name: "empty title",
        status: 400,
        message: /must not be empty/,
        send: () =>
          call(database, chatRoute.PATCH, {
            path: `/api/chats/${chat.id}`,
            method: "PATCH",
            body: { title: "   " },
            params: { id: chat.id },
            browser,
          }),
      },
      {
        name: "unknown field",
        status: 400,
        message: /Unrecognized key/i,
        send: () =>
          call(database, chatRoute.PATCH, {
            path: `/api/chats/${chat.id}`,
            method: "PATCH",
            body: { title: "ok", version: 9 },
            params: { id: chat.id },
            browser,
          }),
      },
      {
        name: "nothing to update",
        status: 400,
        message: /nothing to update/,
        send: () =>
          call(database, chatRoute.PATCH, {
            path: `/api/chats/${chat.id}`,
            method: "PATCH",
            body: {},
            params: { id: chat.id },
            browser,
          }),
      },
      {
        name: "bad model id",
        status: 400,
        message: /provider:model/,
        send: () =>
          call(database, chatRoute.PATCH, {
            path: `/api/chats/${chat.id}`,
            method: "PATCH",
            body: { modelId: "gpt" },
            params: { id: chat.id },
            browser,
          }),
      },
      {
        name: "array body",
        status: 400,
        message: /object/i,
        send: () =>
          call(database, chatsRoute.POST, {
            path: "/api/chats",
            method: "POST",
            body: [1, 2],
            browser,
          }),
      },
      {
        name: "unknown id",
        status: 404,
        message: /Chat not found/,
        send: () =>
          call(database, chatRoute.PATCH, {
            path: "/api/chats/0b9f0b4e-5d0c-4d3e-9f57-000000000000",
            method: "PATCH",
            body: { title: "x" },
            params: { id: "0b9f0b4e-5d0c-4d3e-9f57-000000000000" },
            browser,
          }),
      },
      {
        name: "malformed id",
        status: 404,
        message: /Chat not found/,
        send: () =>
          call(database, chatRoute.DELETE, {
            path: "/api/chats/not-a-uuid",
            method: "DELETE",
            params: { id: "not-a-uuid" },
            browser,
          }),
      },
      {
        name: "oversized body",
        status: 413,
        message: /over/,
        send: () =>
          call(database, chatsRoute.POST, {
            path: "/api/chats",
            method: "POST",
            rawBody: JSON.stringify({ title: "y".repeat(1_100_000) }),
            browser,
          }),
      },
      {
        // A delete reads its (empty) body like any other request: nothing is deleted.
        name: "delete with malformed JSON",
        status: 400,
        message: /not valid JSON/,
        send: () =>
          call(database, chatRoute.DELETE, {
            path: `/api/chats/${chat.id}`,
            method: "DELETE",
            params: { id: chat.id },
            rawBody: "{{{ not json",
            browser,
          }),
      },
      {
        name: "delete with a field it does not take",
        status: 400,
        message: /force/,
        send: () =>
          call(database, chatRoute.DELETE, {
            path: `/api/chats/${chat.id}`,
            method: "DELETE",
            params: { id: chat.id },
            body: { force: true },
            browser,
          }),
      },
      {
        // A mistyped field is refused, not read as "stop whatever runs".
        name: "stop with a misspelt field",
        status: 400,
        message: /messageID/,
        send: () =>
          call(database, stopRoute.POST, {
            path: `/api/chats/${chat.id}/stop`,
            method: "POST",
            params: { id: chat.id },
            body: { messageID: "m1" },
            browser,
          }),
      },
      {
        name: "context with a query it does not take",
        status: 400,
        message: /modelID/,
        send: () =>
          call(database, contextRoute.GET, {
            path: `/api/chats/${chat.id}/context?modelID=fake:x`,
            params: { id: chat.id },
            browser,
          }),
      },
      {
        name: "signed out",
        status: 401,
        message: /sign in/,
        send: () =>
          call(database, chatsRoute.POST, {
            path: "/api/chats",
            method: "POST",
            body: { title: "sneaky" },
            browser: anonymous(),
          }),
      },
    ];
    for (const c of cases) {
      const response = await c.send();
      expect(response.status, c.name).toBe(c.status);
      const json = (await response.json()) as { error: { message: string } };
      expect(json.error.message, c.name).toMatch(c.message);
    }
    expect(await listTitles(database, browser)).toEqual(after);
    expect(after).toEqual(["keep me", ...before]);
  });

  it("answers a new chat with its times exactly as the list shows them, to the microsecond", async () => {
    const database = use();
    const created = await call(database, chatsRoute.POST, {
      path: "/api/chats",
      method: "POST",
      body: { title: "exact" },
      browser,
    });
    const { chat } = (await created.json()) as {
      chat: ChatJson & { createdAt: string; updatedAt: string };
    };
    const listed = await call(database, chatsRoute.GET, { path: "/api/chats", browser });
    const { chats } = (await listed.json()) as {
      chats: Array<{ id: string; createdAt: string; updatedAt: string }>;
    };
    const same = chats.find((c) => c.id === chat.id);
    // The browser pages on from the newest chat it holds: its times must be the stored ones.
    expect(chat.createdAt).toMatch(/\.\d{6}Z$/);
    expect({ createdAt: chat.createdAt, updatedAt: chat.updatedAt }).toEqual({
      createdAt: same?.createdAt,
      updatedAt: same?.updatedAt,
    });
  });

  it("answers New chat with the newest chat while it is unused, and a new one once it is used", async () => {
    const database = use();
    const { browser: dana } = await register(database, "dana@example.com");
    const post = async (body: unknown) => {
      const response = await call(database, chatsRoute.POST, {
        path: "/api/chats",
        method: "POST",
        body,
        browser: dana,
      });
      return {
        status: response.status,
        id: ((await response.json()) as { chat?: ChatJson }).chat?.id,
      };
    };
    const first = await post({ reuseUnused: true });
    expect(first.status).toBe(201);
    // Clicked again: no second empty chat.
    expect(await post({ reuseUnused: true })).toEqual({ status: 200, id: first.id });
    expect(await listTitles(database, dana)).toEqual(["New chat"]);
    // Without asking, the API makes a chat as before.
    const second = await post({});
    expect(second.status).toBe(201);
    if (!second.id) throw new Error("no chat");
    // Used (renamed here; a message or a model picked moves it the same way): New chat makes one.
    await call(database, chatRoute.PATCH, {
      path: `/api/chats/${second.id}`,
      method: "PATCH",
      body: { title: "Used" },
      params: { id: second.id },
      browser: dana,
    });
    const third = await post({ reuseUnused: true });
    expect(third.status).toBe(201);
    expect(new Set([first.id, second.id, third.id]).size).toBe(3);
    expect(await post({ reuseUnused: "yes" })).toMatchObject({ status: 400 });
    // Made with a model (the home page's first message does that): it is used, not new.
    const withModel = await post({ modelId: "demo:demo" });
    expect(withModel.status).toBe(201);
    expect((await post({ reuseUnused: true })).id).not.toBe(withModel.id);
  });

  it("never answers New chat with a chat the user named, even if they named it New chat", async () => {
    const database = use();
    const { browser: gil } = await register(database, "gil@example.com");
    const post = async (body: unknown) => {
      const response = await call(database, chatsRoute.POST, {
        path: "/api/chats",
        method: "POST",
        body,
        browser: gil,
      });
      return ((await response.json()) as { chat: ChatJson }).chat.id;
    };
    // Made with that title of the user's own: it is theirs, not an unused one.
    const named = await post({ title: "New chat" });
    const fresh = await post({ reuseUnused: true });
    expect(fresh).not.toBe(named);
    // Renamed to it: the same.
    await call(database, chatRoute.PATCH, {
      path: `/api/chats/${fresh}`,
      method: "PATCH",
      body: { title: "New chat" },
      params: { id: fresh },
      browser: gil,
    });
    const third = await post({ reuseUnused: true });
    expect(new Set([named, fresh, third]).size).toBe(3);
    expect(await listTitles(database, gil)).toEqual(["New chat", "New chat", "New chat"]);
  });

  it("never answers New chat with an empty chat that a first turn or a compaction holds", async () => {
    const database = use();
    const { browser: erin } = await register(database, "erin@example.com");
    const post = async () => {
      const response = await call(database, chatsRoute.POST, {
        path: "/api/chats",
        method: "POST",
        body: { reuseUnused: true },
        browser: erin,
      });
      return ((await response.json()) as { chat: ChatJson }).chat.id;
    };
    for (const column of ["active_turn_until", "compaction_until"]) {
      const empty = await post();
      // Another tab's first message: its turn takes the chat before the message is stored.
      await database.db.execute(
        sql`update chat set ${sql.raw(column)} = now() + interval '1 minute' where id = ${empty}`,
      );
      const next = await post();
      expect(next, column).not.toBe(empty);
      // Once the chat is free again and still empty, it is the one handed back.
      await database.db.execute(sql`update chat set ${sql.raw(column)} = null where id = ${next}`);
      expect(await post(), column).toBe(next);
    }
  });

  it("reports the database as healthy", async () => {
    const database = use();
    const { withDatabase } = await import("@/lib/db/client");
    const response = await withDatabase(database, () => healthRoute.GET());
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      status: "ok",
      database: { ok: true, driver: database.driver },
    });
  });
});
