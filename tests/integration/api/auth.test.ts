import { eq, inArray } from "drizzle-orm";
import { expect, it, vi } from "vitest";

vi.hoisted(() => {
  // Read no more: an unverified email must not make anyone an admin.
  process.env.ADMIN_EMAILS = "boss@example.com";
});

import * as adminModels from "@/app/api/admin/models/route";
import * as authRoute from "@/app/api/auth/[...all]/route";
import * as chatRoute from "@/app/api/chats/[id]/route";
import * as chatsRoute from "@/app/api/chats/route";
import { user } from "@/lib/db/schema";
import { PASSWORD, register, sessionOf, signIn, signOut } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { anonymous, call } from "../../helpers/http";

describeEachDriver("auth", (use) => {
  it("registers, signs out and signs back in", async () => {
    const database = use();
    const { response, browser } = await register(database, "ada@example.com");
    expect(response.status).toBe(200);
    expect((await sessionOf(database, browser))?.user.email).toBe("ada@example.com");

    expect((await signOut(database, browser)).status).toBe(200);
    expect(await sessionOf(database, browser)).toBeNull();

    const again = await signIn(database, "ada@example.com");
    expect(again.response.status).toBe(200);
    expect((await sessionOf(database, again.browser))?.user.email).toBe("ada@example.com");
  });

  it("answers 401 at once to a copy of a signed-out session's cookies, cookie cache and all", async () => {
    const database = use();
    const { browser } = await register(database, "cid@example.com");
    const list = () => call(database, chatsRoute.GET, { path: "/api/chats", browser: copy });
    // Another tab, or a stolen cookie jar: the same cookies, including the signed session cache.
    const copy = { cookie: browser.cookie };
    expect(copy.cookie).toContain("session_data=");
    expect((await list()).status).toBe(200);

    expect((await signOut(database, browser)).status).toBe(200);
    const after = await list();
    expect(after.status).toBe(401);
  });

  it("applies a disabled account or a lost admin role at once to cookies it answered before", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const cid = await register(database, "cid-2@example.com");
    const models = () =>
      call(database, adminModels.GET, { path: "/api/admin/models", browser: ada.browser });
    const list = () => call(database, chatsRoute.GET, { path: "/api/chats", browser: cid.browser });
    // Each cookie jar answered once: the server has seen and verified these very cookies.
    expect((await models()).status).toBe(200);
    expect((await list()).status).toBe(200);

    await database.db
      .update(user)
      .set({ status: "disabled" })
      .where(eq(user.email, "cid-2@example.com"));
    const refused = await list();
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: "forbidden:account_disabled" } });

    await database.db.update(user).set({ role: "user" }).where(eq(user.email, "ada@example.com"));
    expect((await models()).status).toBe(403);
    await database.db.update(user).set({ role: "admin" }).where(eq(user.email, "ada@example.com"));
  });

  it("rejects a wrong password and a duplicate email", async () => {
    const database = use();
    expect((await signIn(database, "ada@example.com", "not the password")).response.status).toBe(
      401,
    );
    expect((await register(database, "ada@example.com")).response.status).toBe(422);
  });

  it("refuses a name with nothing to show (blank, line breaks, a lone direction mark), creating no account", async () => {
    const database = use();
    const blanks = ["", "   ", "\n\t", "\u202e", "\u00a0\u200b"];
    for (const [i, name] of blanks.entries()) {
      const refused = await register(database, `blank-${i}@example.com`, name);
      expect(refused.response.status, JSON.stringify(name)).toBe(400);
      expect(((await refused.response.json()) as { code?: string }).code).toBe("NAME_REQUIRED");
    }
    const created = await database.db
      .select({ email: user.email })
      .from(user)
      .where(
        inArray(
          user.email,
          blanks.map((_, i) => `blank-${i}@example.com`),
        ),
      );
    expect(created).toEqual([]);
    // A name with letters in it, spaces around them, is a name.
    expect((await register(database, "spaced@example.com", "  Ada  ")).response.status).toBe(200);
  });

  it("refuses an oversized body (413), a name past 100 characters and an email past 254 (400), creating no account", async () => {
    const database = use();
    const huge = await call(database, authRoute.POST, {
      path: "/api/auth/sign-up/email",
      method: "POST",
      body: { email: "huge@example.com", password: PASSWORD, name: "x".repeat(100_000) },
      browser: anonymous(),
    });
    expect(huge.status).toBe(413);
    const long = await register(database, "long-name@example.com", "y".repeat(101));
    expect(long.response.status).toBe(400);
    expect(((await long.response.json()) as { code?: string }).code).toBe("NAME_TOO_LONG");
    // An address longer than mail allows (and than the email index takes): 400, said so.
    const longEmail = `${"e".repeat(3_000)}@example.com`;
    const tooLong = await register(database, longEmail, "Long Address");
    expect(tooLong.response.status).toBe(400);
    expect(((await tooLong.response.json()) as { code?: string }).code).toBe("EMAIL_TOO_LONG");
    const created = await database.db
      .select({ email: user.email })
      .from(user)
      .where(inArray(user.email, ["huge@example.com", "long-name@example.com", longEmail]));
    expect(created).toEqual([]);
    // A name at the limit is fine.
    expect(
      (await register(database, "just-right@example.com", "z".repeat(100))).response.status,
    ).toBe(200);
  });

  it("answers 400, not 500, to text Postgres cannot store in an auth route's body or query", async () => {
    const database = use();
    const { browser } = await register(database, "nul@example.com");
    const post = (path: string, body: unknown, as = anonymous()) =>
      call(database, authRoute.POST, { path, method: "POST", body, browser: as });
    // Anonymous: anyone could send these.
    const reset = await post("/api/auth/reset-password", {
      token: "x\u0000",
      newPassword: "correct horse battery2",
    });
    expect(reset.status).toBe(400);
    expect(((await reset.json()) as { error?: { code?: string } }).error?.code).toBe(
      "bad_request:body",
    );
    expect((await post("/api/auth/revoke-session", { token: "x\u0000" }, browser)).status).toBe(
      400,
    );
    const verify = await call(database, authRoute.GET, {
      path: "/api/auth/verify-email?token=x%00",
      browser: anonymous(),
    });
    expect(verify.status).toBe(400);
    // better-auth reads form bodies too, and every value of a repeated query key.
    const form = await call(database, authRoute.POST, {
      path: "/api/auth/sign-up/email",
      method: "POST",
      rawBody: `name=a%00b&email=form-nul%40example.com&password=${encodeURIComponent(PASSWORD)}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      browser: anonymous(),
    });
    expect(form.status).toBe(400);
    expect(
      await database.db.select().from(user).where(eq(user.email, "form-nul@example.com")),
    ).toEqual([]);
    // The same form with its media type in capitals, which better-auth reads as a form too.
    const shouted = await call(database, authRoute.POST, {
      path: "/api/auth/sign-up/email",
      method: "POST",
      rawBody: `name=a%00b&email=form-nul%40example.com&password=${encodeURIComponent(PASSWORD)}`,
      headers: { "content-type": "Application/X-WWW-Form-Urlencoded" },
      browser: anonymous(),
    });
    expect(shouted.status).toBe(400);
    // A JSON body behind byte-order marks, which better-auth strips before it parses.
    for (const path of ["/api/auth/reset-password", "/api/auth/revoke-session"]) {
      const marked = await call(database, authRoute.POST, {
        path,
        method: "POST",
        rawBody: `\uFEFF\uFEFF${JSON.stringify({ token: "x\u0000", newPassword: "correct horse battery2" })}`,
        browser,
      });
      expect(marked.status, path).toBe(400);
    }
    expect(
      await database.db.select().from(user).where(eq(user.email, "form-nul@example.com")),
    ).toEqual([]);
    const repeated = await call(database, authRoute.GET, {
      path: "/api/auth/verify-email?token=x&token=y%00",
      browser: anonymous(),
    });
    expect(repeated.status).toBe(400);
    // The same requests without the NUL are better-auth's to answer, as before.
    expect(
      (
        await post("/api/auth/reset-password", {
          token: "x",
          newPassword: "correct horse battery2",
        })
      ).status,
    ).toBe(400);
    // The session that sent one is untouched.
    expect((await sessionOf(database, browser))?.user.email).toBe("nul@example.com");
  });

  it("makes the first user admin and the second not; ADMIN_EMAILS makes no one admin", async () => {
    const database = use();
    // ada registered first in this database.
    const ada = await signIn(database, "ada@example.com");
    expect((await sessionOf(database, ada.browser))?.user.role).toBe("admin");
    const bob = await register(database, "bob@example.com");
    expect((await sessionOf(database, bob.browser))?.user.role).toBe("user");
    const boss = await register(database, "boss@example.com");
    expect((await sessionOf(database, boss.browser))?.user.role).toBe("user");
  });

  it("answers 403 to a non-admin and 401 to a stranger on an admin route", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const bob = await signIn(database, "bob@example.com");
    expect(
      (await call(database, adminModels.GET, { path: "/api/admin/models", browser: ada.browser }))
        .status,
    ).toBe(200);
    const denied = await call(database, adminModels.GET, {
      path: "/api/admin/models",
      browser: bob.browser,
    });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ error: { code: "forbidden:admin" } });
    expect(
      (await call(database, adminModels.GET, { path: "/api/admin/models", browser: anonymous() }))
        .status,
    ).toBe(401);
  });

  it("answers 404 to user B on user A's chat for GET, PATCH and DELETE, exactly like a missing chat", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const bob = await signIn(database, "bob@example.com");
    const created = await call(database, chatsRoute.POST, {
      path: "/api/chats",
      method: "POST",
      body: { title: "Ada's secrets" },
      browser: ada.browser,
    });
    const { chat } = (await created.json()) as { chat: { id: string } };
    const missing = "7a0b3b8e-0000-4000-8000-000000000000";

    for (const [method, handler, body] of [
      ["GET", chatRoute.GET, undefined],
      ["PATCH", chatRoute.PATCH, { title: "stolen" }],
      ["DELETE", chatRoute.DELETE, undefined],
    ] as const) {
      const foreign = await call(database, handler, {
        path: `/api/chats/${chat.id}`,
        method,
        body,
        params: { id: chat.id },
        browser: bob.browser,
      });
      const absent = await call(database, handler, {
        path: `/api/chats/${missing}`,
        method,
        body,
        params: { id: missing },
        browser: bob.browser,
      });
      expect(foreign.status, method).toBe(404);
      expect(await foreign.json()).toEqual(await absent.json());
    }

    const stillThere = await call(database, chatRoute.GET, {
      path: `/api/chats/${chat.id}`,
      params: { id: chat.id },
      browser: ada.browser,
    });
    expect(await stillThere.json()).toMatchObject({ chat: { title: "Ada's secrets" } });
    const bobsList = await call(database, chatsRoute.GET, {
      path: "/api/chats",
      browser: bob.browser,
    });
    expect(await bobsList.json()).toEqual({ chats: [], hasMore: false });
  });
});
