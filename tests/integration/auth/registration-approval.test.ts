import { expect, it, vi } from "vitest";

vi.hoisted(() => {
  // The default mode, set here on purpose: the test setup opens registration for other files.
  process.env.REGISTRATION = "approval";
});

import * as adminUsers from "@/app/api/admin/users/[id]/route";
import * as chatApi from "@/app/api/chat/route";
import * as chatRoute from "@/app/api/chats/[id]/route";
import * as chatsRoute from "@/app/api/chats/route";
import * as modelsRoute from "@/app/api/models/route";
import { countUsers } from "@/lib/db/queries/users";
import { register, sessionOf, signIn } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { whileCommitsSlowed } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";

const SOME_CHAT = "7a0b3b8e-0000-4000-8000-000000000000";

/** One call to every app route a signed-in user may reach. */
function everyAppRoute(database: Parameters<typeof call>[0], browser: Browser) {
  return [
    call(database, chatsRoute.GET, { path: "/api/chats", browser }),
    call(database, chatsRoute.POST, { path: "/api/chats", method: "POST", body: {}, browser }),
    call(database, chatRoute.GET, {
      path: `/api/chats/${SOME_CHAT}`,
      params: { id: SOME_CHAT },
      browser,
    }),
    call(database, chatRoute.PATCH, {
      path: `/api/chats/${SOME_CHAT}`,
      method: "PATCH",
      body: { title: "x" },
      params: { id: SOME_CHAT },
      browser,
    }),
    call(database, modelsRoute.GET, { path: "/api/models", browser }),
    call(database, chatApi.POST, {
      path: "/api/chat",
      method: "POST",
      body: {
        trigger: "submit-message",
        chatId: SOME_CHAT,
        message: { id: "u-1", role: "user", parts: [{ type: "text", text: "hi" }] },
      },
      browser,
    }),
  ];
}

describeEachDriver("registration: approval (the default)", (use) => {
  it("makes the first account the active admin", async () => {
    const database = use();
    const { response, browser } = await register(database, "ada@example.com");
    expect(response.status).toBe(200);
    expect((await sessionOf(database, browser))?.user).toMatchObject({
      role: "admin",
      status: "active",
    });
    const chats = await call(database, chatsRoute.GET, { path: "/api/chats", browser });
    expect(chats.status).toBe(200);
  });

  it("lets a later account sign in, but every app route answers 403 pending_approval", async () => {
    const database = use();
    const { response, browser } = await register(database, "bob@example.com");
    expect(response.status).toBe(200);
    expect((await sessionOf(database, browser))?.user).toMatchObject({
      role: "user",
      status: "pending",
    });
    for (const answer of await Promise.all(everyAppRoute(database, browser))) {
      expect(answer.status, answer.url).toBe(403);
      expect(await answer.json()).toMatchObject({
        error: {
          code: "forbidden:pending_approval",
          message: "Your account is waiting for an admin's approval.",
        },
      });
    }
    // A pending account signs in again and is still waiting.
    const again = await signIn(database, "bob@example.com");
    expect(again.response.status).toBe(200);
  });

  it("lets the account in once an admin approves it", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const bob = await signIn(database, "bob@example.com");
    const bobId = (await sessionOf(database, bob.browser))?.user.id ?? "";
    const approved = await call(database, adminUsers.PATCH, {
      path: `/api/admin/users/${bobId}`,
      method: "PATCH",
      body: { status: "active" },
      params: { id: bobId },
      browser: ada.browser,
    });
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ user: { status: "active", role: "user" } });
    const chats = await call(database, chatsRoute.GET, {
      path: "/api/chats",
      browser: bob.browser,
    });
    expect(chats.status).toBe(200);
  });

  it("keeps a disabled account out: its sessions end and it cannot sign in", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const carol = await register(database, "carol@example.com");
    const carolId = (await sessionOf(database, carol.browser))?.user.id ?? "";
    const disabled = await call(database, adminUsers.PATCH, {
      path: `/api/admin/users/${carolId}`,
      method: "PATCH",
      body: { status: "disabled" },
      params: { id: carolId },
      browser: ada.browser,
    });
    expect(disabled.status).toBe(200);
    expect(await sessionOf(database, carol.browser)).toBeNull();
    const refused = await signIn(database, "carol@example.com");
    expect(refused.response.status).toBe(403);
    expect(await refused.response.json()).toMatchObject({ code: "ACCOUNT_DISABLED" });
    expect(await countUsers(database.db)).toBe(3);
  });
});

describeEachDriver("registration: two first sign-ups at once", (use, driver) => {
  it("makes exactly one of them admin", async () => {
    const database = use();
    const emails = Array.from({ length: 6 }, (_, i) => `first-${i}@example.com`);
    const registerAll = () => Promise.all(emails.map((email) => register(database, email)));
    // On Postgres each account's write is slow to commit: another sign-up's claim reads that
    // there is no admin yet before it does, unless the admin lock keeps the claims apart.
    const results =
      driver === "pg"
        ? await whileCommitsSlowed(database.db, "user", 500, registerAll)
        : await registerAll();
    expect(results.map((r) => r.response.status)).toEqual(emails.map(() => 200));
    const sessions = await Promise.all(results.map((r) => sessionOf(database, r.browser)));
    const admins = sessions.filter((s) => s?.user.role === "admin");
    expect(admins).toHaveLength(1);
    expect(admins[0]?.user.status).toBe("active");
    // Everyone else waits for that admin, as any later sign-up would.
    const others = sessions.filter((s) => s?.user.role === "user").map((s) => s?.user.status);
    expect(others).toEqual(Array(5).fill("pending"));
  });
});
