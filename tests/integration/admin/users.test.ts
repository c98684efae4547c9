import { like } from "drizzle-orm";
import { expect, it } from "vitest";
import * as quotasRoute from "@/app/api/admin/quotas/route";
import * as userRoute from "@/app/api/admin/users/[id]/route";
import * as usageRoute from "@/app/api/admin/users/[id]/usage/route";
import * as usersRoute from "@/app/api/admin/users/route";
import * as chatsRoute from "@/app/api/chats/route";
import { encodeUserCursor } from "@/lib/admin/user-input";
import type { AdminUser, AdminUserList } from "@/lib/admin/users";
import type { Database } from "@/lib/db/client";
import { addTokens, usageOn } from "@/lib/db/queries/usage";
import { findUser, updateUserRow } from "@/lib/db/queries/users";
import { user as userTable } from "@/lib/db/schema";
import { usageDayOf } from "@/lib/limits/quota-day";
import { register, sessionOf, signIn } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { whileCommitsSlowed } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";

// REGISTRATION=open (the test setup): this file is about what admins do, not about sign-up.

async function idOf(database: Database, browser: Browser): Promise<string> {
  const session = await sessionOf(database, browser);
  if (!session) throw new Error("not signed in");
  return session.user.id;
}

function patch(database: Database, browser: Browser, id: string, body: unknown) {
  return call(database, userRoute.PATCH, {
    path: `/api/admin/users/${id}`,
    method: "PATCH",
    body,
    params: { id },
    browser,
  });
}

async function list(database: Database, browser: Browser, query = ""): Promise<AdminUserList> {
  const response = await call(database, usersRoute.GET, {
    path: `/api/admin/users${query}`,
    browser,
  });
  expect(response.status).toBe(200);
  return (await response.json()) as AdminUserList;
}

describeEachDriver("Admin → Users API", (use, driver) => {
  it("lists every account with role, status, limits and today's usage; 403 to a non-admin", async () => {
    const database = use();
    const ada = await register(database, "ada@example.com");
    const bob = await register(database, "bob@example.com");
    const { users, defaults } = await list(database, ada.browser);
    expect(defaults).toEqual({ dailyTokenLimit: null, dailyMessageLimit: null });
    expect(users.map((u) => [u.email, u.role, u.status])).toEqual([
      ["ada@example.com", "admin", "active"],
      ["bob@example.com", "user", "active"],
    ]);
    expect(users[1]).toMatchObject({
      limits: { dailyTokenLimit: null, dailyMessageLimit: null },
      usageToday: { messages: 0, tokens: 0 },
    });
    const denied = await call(database, usersRoute.GET, {
      path: "/api/admin/users",
      browser: bob.browser,
    });
    expect(denied.status).toBe(403);
    const bobId = await idOf(database, bob.browser);
    expect((await patch(database, bob.browser, bobId, { role: "admin" })).status).toBe(403);
    expect((await findUser(database.db, bobId))?.role).toBe("user");
  });

  it("promotes and demotes, but never the acting admin themself", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const bob = await signIn(database, "bob@example.com");
    const adaId = await idOf(database, ada.browser);
    const bobId = await idOf(database, bob.browser);

    const promoted = await patch(database, ada.browser, bobId, { role: "admin" });
    expect(await promoted.json()).toMatchObject({ user: { id: bobId, role: "admin" } });
    // Bob is an admin now and can see the list.
    await list(database, bob.browser);

    const selfDemote = await patch(database, ada.browser, adaId, { role: "user" });
    expect(selfDemote.status).toBe(400);
    expect(await selfDemote.json()).toMatchObject({ error: { code: "bad_request:self" } });

    const demoted = await patch(database, ada.browser, bobId, { role: "user" });
    expect(await demoted.json()).toMatchObject({ user: { role: "user" } });
    expect(
      (await call(database, usersRoute.GET, { path: "/api/admin/users", browser: bob.browser }))
        .status,
    ).toBe(403);
  });

  it("an Approve from a page that went stale does not re-enable an account another admin disabled", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const { browser } = await register(database, "pat@example.com");
    const patId = await idOf(database, browser);
    // Waiting for approval, as REGISTRATION=approval leaves a new account.
    await updateUserRow(database.db, patId, { status: "pending" });
    // Another admin disables the account; Ada's page still shows it waiting.
    const disabled = await patch(database, ada.browser, patId, {
      status: "disabled",
      from: "pending",
    });
    expect(disabled.status).toBe(200);
    const stale = await patch(database, ada.browser, patId, { status: "active", from: "pending" });
    expect(stale.status).toBe(409);
    expect(await stale.json()).toMatchObject({ error: { code: "conflict:user_status" } });
    expect((await findUser(database.db, patId))?.status).toBe("disabled");
    // Enable, from what the page shows once refreshed, goes through; `from` alone is refused.
    const enabled = await patch(database, ada.browser, patId, {
      status: "active",
      from: "disabled",
    });
    expect(enabled.status).toBe(200);
    expect((await patch(database, ada.browser, patId, { from: "active" })).status).toBe(400);
    expect((await findUser(database.db, patId))?.status).toBe("active");
  });

  it("sets and clears a user's own limits, refusing bad numbers without writing", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const bobId = await idOf(database, (await signIn(database, "bob@example.com")).browser);

    const set = await patch(database, ada.browser, bobId, {
      dailyMessageLimit: 5,
      dailyTokenLimit: 10_000,
    });
    expect(((await set.json()) as { user: AdminUser }).user.limits).toEqual({
      dailyMessageLimit: 5,
      dailyTokenLimit: 10_000,
    });
    for (const bad of [
      { dailyMessageLimit: -1 },
      { dailyTokenLimit: 1.5 },
      { status: "pending" },
      {},
    ]) {
      const refused = await patch(database, ada.browser, bobId, bad);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
    }
    const cleared = await patch(database, ada.browser, bobId, { dailyMessageLimit: null });
    expect(((await cleared.json()) as { user: AdminUser }).user.limits).toEqual({
      dailyMessageLimit: null,
      dailyTokenLimit: 10_000,
    });
    const missing = await patch(database, ada.browser, "no-such-user", { role: "admin" });
    expect(missing.status).toBe(404);
  });

  it("saves the default quotas every user without an override has", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const saved = await call(database, quotasRoute.PUT, {
      path: "/api/admin/quotas",
      method: "PUT",
      body: { dailyTokenLimit: 200_000, dailyMessageLimit: 100 },
      browser: ada.browser,
    });
    expect(await saved.json()).toEqual({
      defaults: { dailyTokenLimit: 200_000, dailyMessageLimit: 100 },
    });
    const refused = await call(database, quotasRoute.PUT, {
      path: "/api/admin/quotas",
      method: "PUT",
      body: { dailyTokenLimit: "lots", dailyMessageLimit: 100 },
      browser: ada.browser,
    });
    expect(refused.status).toBe(400);
    expect((await list(database, ada.browser)).defaults).toEqual({
      dailyTokenLimit: 200_000,
      dailyMessageLimit: 100,
    });
  });

  it("PATCH changes only the default limit it names; nothing or a bad number writes nothing", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const quotas = (body: unknown) =>
      call(database, quotasRoute.PATCH, {
        path: "/api/admin/quotas",
        method: "PATCH",
        body,
        browser: ada.browser,
      });
    await call(database, quotasRoute.PUT, {
      path: "/api/admin/quotas",
      method: "PUT",
      body: { dailyTokenLimit: 200_000, dailyMessageLimit: 100 },
      browser: ada.browser,
    });
    const messagesOnly = await quotas({ dailyMessageLimit: 40 });
    expect(messagesOnly.status).toBe(200);
    expect(await messagesOnly.json()).toEqual({
      defaults: { dailyTokenLimit: 200_000, dailyMessageLimit: 40 },
    });
    const tokensCleared = await quotas({ dailyTokenLimit: null });
    expect(await tokensCleared.json()).toEqual({
      defaults: { dailyTokenLimit: null, dailyMessageLimit: 40 },
    });
    expect((await quotas({})).status).toBe(400);
    expect((await quotas({ dailyMessageLimit: -1 })).status).toBe(400);
    expect((await quotas({ dailyMessageLimit: 5, other: 1 })).status).toBe(400);
    expect((await list(database, ada.browser)).defaults).toEqual({
      dailyTokenLimit: null,
      dailyMessageLimit: 40,
    });
  });

  it("resets a user's usage of today", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const bobId = await idOf(database, (await signIn(database, "bob@example.com")).browser);
    const today = usageDayOf(new Date());
    await addTokens(database.db, bobId, today, 4_321);
    expect(
      (await list(database, ada.browser)).users.find((u) => u.id === bobId)?.usageToday,
    ).toEqual({
      messages: 0,
      tokens: 4_321,
    });
    const reset = await call(database, usageRoute.DELETE, {
      path: `/api/admin/users/${bobId}/usage`,
      method: "DELETE",
      params: { id: bobId },
      browser: ada.browser,
    });
    expect(reset.status).toBe(200);
    expect(await usageOn(database.db, bobId, today)).toEqual({ messages: 0, tokens: 0 });
  });

  it("deletes an account with its chats, never the acting admin's own", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const carol = await register(database, "carol@example.com");
    const carolId = await idOf(database, carol.browser);
    await call(database, chatsRoute.POST, {
      path: "/api/chats",
      method: "POST",
      body: { title: "Carol's chat" },
      browser: carol.browser,
    });
    const own = await call(database, userRoute.DELETE, {
      path: `/api/admin/users/${await idOf(database, ada.browser)}`,
      method: "DELETE",
      params: { id: await idOf(database, ada.browser) },
      browser: ada.browser,
    });
    expect(own.status).toBe(400);
    // A body that is not JSON deletes nothing, nor does one that resets usage.
    for (const route of [userRoute.DELETE, usageRoute.DELETE]) {
      const malformed = await call(database, route, {
        path: `/api/admin/users/${carolId}`,
        method: "DELETE",
        params: { id: carolId },
        rawBody: "{{{ not json",
        browser: ada.browser,
      });
      expect(malformed.status).toBe(400);
    }
    expect(await findUser(database.db, carolId)).not.toBeNull();
    const deleted = await call(database, userRoute.DELETE, {
      path: `/api/admin/users/${carolId}`,
      method: "DELETE",
      params: { id: carolId },
      browser: ada.browser,
    });
    expect(deleted.status).toBe(204);
    expect(await findUser(database.db, carolId)).toBeNull();
    expect(await sessionOf(database, carol.browser)).toBeNull();
    expect((await list(database, ada.browser)).users.map((u) => u.email)).not.toContain(
      "carol@example.com",
    );
  });

  it("leaves an admin even when two admins demote each other at once", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const bob = await signIn(database, "bob@example.com");
    const adaId = await idOf(database, ada.browser);
    const bobId = await idOf(database, bob.browser);
    await patch(database, ada.browser, bobId, { role: "admin" });
    const demoteEachOther = () =>
      Promise.all([
        patch(database, ada.browser, bobId, { role: "user" }),
        patch(database, bob.browser, adaId, { role: "user" }),
      ]);
    // On Postgres each demotion is slow to commit: the other admin's checks that its actor is
    // still an admin run before it does, unless the admin lock keeps them apart.
    const answers =
      driver === "pg"
        ? await whileCommitsSlowed(database.db, "user", 1_000, demoteEachOther)
        : await demoteEachOther();
    expect(answers.map((a) => a.status).sort()).toEqual([200, 403]);
    const roles = await Promise.all([findUser(database.db, adaId), findUser(database.db, bobId)]);
    expect(roles.filter((u) => u?.role === "admin")).toHaveLength(1);
  });

  it("pages through the accounts, waiting ones first, each once, and searches names and addresses", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const before = (await list(database, ada.browser)).total;
    // One statement: every row has the same creation time, so only the id orders them.
    await database.db.insert(userTable).values(
      Array.from({ length: 250 }, (_, i) => ({
        id: `paged-${String(i).padStart(3, "0")}`,
        name: i % 50 === 0 ? `Waiting 100%_${i}` : `Paged ${i}`,
        email: `paged-${i}@example.com`,
        status: i % 50 === 0 ? ("pending" as const) : ("active" as const),
      })),
    );
    try {
      const seen: AdminUser[] = [];
      let next: string | null = "";
      let pages = 0;
      while (next !== null) {
        const query: string = next ? `?limit=90&after=${encodeURIComponent(next)}` : "?limit=90";
        const page = await list(database, ada.browser, query);
        expect(page.total).toBe(before + 250);
        expect(page.users.length).toBeLessThanOrEqual(90);
        seen.push(...page.users);
        next = page.next;
        pages += 1;
      }
      expect(pages).toBe(Math.ceil((before + 250) / 90));
      expect(new Set(seen.map((u) => u.id)).size).toBe(before + 250);
      // The five waiting accounts first, then the rest.
      expect(seen.slice(0, 5).map((u) => u.status)).toEqual(Array(5).fill("pending"));
      expect(seen.slice(5).some((u) => u.status === "pending")).toBe(false);

      const found = await list(database, ada.browser, "?q=%20WAITING%20100%25_1");
      // Case aside; % and _ match themselves, not any text.
      expect(found.users.map((u) => u.name)).toEqual(["Waiting 100%_100", "Waiting 100%_150"]);
      expect(found).toMatchObject({ total: 2, next: null });
      // A page the matches fill exactly is the last: no "Show more" that would load nothing.
      const exact = await list(database, ada.browser, "?q=waiting%20100&limit=5");
      expect(exact).toMatchObject({ total: 5, next: null });
      expect(exact.users).toHaveLength(5);
      expect((await list(database, ada.browser, "?q=paged-7@")).users.map((u) => u.id)).toEqual([
        "paged-007",
      ]);
      expect((await list(database, ada.browser, "?q=100_%25")).total).toBe(0);

      for (const bad of [
        "?after=nope",
        "?after=WzEsIjEiXQ",
        "?limit=0",
        "?limit=201",
        "?limit=x",
        "?q=a&q=b",
        "?sort=name",
        // A cursor of the list's shape whose time is past what Postgres's bigint holds.
        `?after=${encodeUserCursor({ rank: 1, createdMicros: "9999999999999999999", id: "x" })}`,
        `?after=${encodeUserCursor({ rank: 1, createdMicros: "-9999999999999999999", id: "x" })}`,
      ]) {
        const answer = await call(database, usersRoute.GET, {
          path: `/api/admin/users${bad}`,
          browser: ada.browser,
        });
        expect(answer.status, bad).toBe(400);
        // Its message names the parameter once ("limit must be at least 1", not "limit: limit …").
        const { error } = (await answer.json()) as { error: { message: string } };
        expect(error.message, bad).not.toMatch(/^(\w+)\b.*\b\1\b/);
      }
    } finally {
      await database.db.delete(userTable).where(like(userTable.id, "paged-%"));
    }
  });

  it("finds a name however its accents were encoded, composed or decomposed", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    await database.db.insert(userTable).values([
      { id: "nfd-1", name: "Zoe\u0308 Martin", email: "zoe@example.com", status: "active" },
      { id: "nfc-1", name: "Jos\u00e9 Ruiz", email: "jose@example.com", status: "active" },
    ]);
    try {
      for (const [q, id] of [
        ["Zo\u00eb", "nfd-1"],
        ["Zoe\u0308", "nfd-1"],
        ["Jose\u0301", "nfc-1"],
      ]) {
        const found = await list(database, ada.browser, `?q=${encodeURIComponent(q as string)}`);
        expect(
          found.users.map((u) => u.id),
          q,
        ).toEqual([id]);
      }
    } finally {
      await database.db.delete(userTable).where(like(userTable.id, "nf%-1"));
    }
  });

  it("lists more accounts than one statement can name by id (65,535 bound values)", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const before = (await list(database, ada.browser)).total;
    const others = Array.from({ length: 65_535 }, (_, i) => `many-${i}`);
    for (let from = 0; from < others.length; from += 5_000) {
      await database.db
        .insert(userTable)
        .values(
          others
            .slice(from, from + 5_000)
            .map((id) => ({ id, name: id, email: `${id}@example.com` })),
        );
    }
    await addTokens(database.db, "many-65534", usageDayOf(new Date()), 42);
    const first = await list(database, ada.browser, "?limit=200");
    expect(first.total).toBe(before + 65_535);
    expect(first.users).toHaveLength(200);
    expect(first.next).not.toBeNull();
    const { users } = await list(database, ada.browser, "?q=many-65534");
    expect(users.map((u) => [u.id, u.usageToday])).toEqual([
      ["many-65534", { messages: 0, tokens: 42 }],
    ]);
    await database.db.delete(userTable).where(like(userTable.id, "many-%"));
  });
});
