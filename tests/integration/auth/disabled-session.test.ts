import { eq } from "drizzle-orm";
import { expect, it, vi } from "vitest";
import * as adminUser from "@/app/api/admin/users/[id]/route";
import * as authRoute from "@/app/api/auth/[...all]/route";
import * as chatsRoute from "@/app/api/chats/route";
import { PAGE_PATH_HEADER } from "@/lib/auth/return-path";
import { signInPage } from "@/lib/auth/session";
import { type Database, withDatabase } from "@/lib/db/client";
import { disabledSession, session as sessionTable } from "@/lib/db/schema";
import { register, sessionOf, signIn, signOut } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { anonymous, type Browser, call } from "../../helpers/http";

const PAGE = "/chat/7a0b3b8e-0000-4000-8000-000000000000";

/** Where a page sends this browser when it has no session (lib/auth/session.ts). */
function signInPageFor(database: Database, browser: Browser) {
  const headers = new Headers({ [PAGE_PATH_HEADER]: PAGE });
  if (browser.cookie) headers.set("cookie", browser.cookie);
  return withDatabase(database, () => signInPage(headers));
}

async function listChats(database: Database, browser: Browser) {
  const response = await call(database, chatsRoute.GET, { path: "/api/chats", browser });
  const body = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: body.error?.code };
}

/** The id of the session this browser is signed in with. */
async function sessionIdOf(database: Database, browser: Browser): Promise<string> {
  const response = await call(database, authRoute.GET, { path: "/api/auth/get-session", browser });
  const body = (await response.json()) as { session: { id: string } } | null;
  if (!body) throw new Error("not signed in");
  return body.session.id;
}

function setStatus(database: Database, admin: Browser, id: string, status: string) {
  return call(database, adminUser.PATCH, {
    path: `/api/admin/users/${id}`,
    method: "PATCH",
    body: { status },
    params: { id },
    browser: admin,
  });
}

describeEachDriver("a session that ended because an admin disabled its account", (use) => {
  it("tells its own browser why it was signed out, and no one else", async () => {
    const database = use();
    const ada = await register(database, "ada@example.com");
    const carol = await register(database, "carol@example.com");
    // Carol is signed in on a second device too.
    const carolPhone = (await signIn(database, "carol@example.com")).browser;
    const carolId = (await sessionOf(database, carol.browser))?.user.id ?? "";
    const signedOut = await register(database, "dan@example.com");
    expect((await signOut(database, signedOut.browser)).status).toBe(200);

    expect((await setStatus(database, ada.browser, carolId, "disabled")).status).toBe(200);

    // Each of Carol's browsers: the API says the account is disabled, the pages send it to
    // sign in with the reason.
    for (const browser of [carol.browser, carolPhone]) {
      expect(await listChats(database, browser)).toEqual({
        status: 403,
        code: "forbidden:account_disabled",
      });
      expect(await signInPageFor(database, browser)).toBe(
        `/login?next=${encodeURIComponent(PAGE)}&reason=disabled`,
      );
    }
    // A stranger, a browser that signed out, and one whose cookie was made up learn nothing.
    const forged = {
      cookie: carol.browser.cookie.replace(
        /session_token=(\w)/,
        (_, first: string) => `session_token=${first === "x" ? "y" : "x"}`,
      ),
    };
    expect(forged.cookie).not.toBe(carol.browser.cookie);
    for (const browser of [anonymous(), signedOut.browser, forged]) {
      expect(await listChats(database, browser)).toEqual({
        status: 401,
        code: "unauthorized:auth",
      });
      expect(await signInPageFor(database, browser)).toBe(
        `/login?next=${encodeURIComponent(PAGE)}`,
      );
    }
    // The session is still gone: Ada's account is untouched.
    expect((await listChats(database, ada.browser)).status).toBe(200);

    // Enabled again, Carol's old cookie is just signed out: it neither works nor says disabled.
    expect((await setStatus(database, ada.browser, carolId, "active")).status).toBe(200);
    expect((await listChats(database, carol.browser)).status).toBe(401);
    expect(await signInPageFor(database, carol.browser)).toBe(
      `/login?next=${encodeURIComponent(PAGE)}`,
    );
    expect(await database.db.select().from(disabledSession)).toEqual([]);
  });

  it("says so only while the ended session would still have been valid; later rows are dropped", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const erin = await register(database, "erin@example.com");
    const erinPhone = (await signIn(database, "erin@example.com")).browser;
    const erinId = (await sessionOf(database, erin.browser))?.user.id ?? "";
    const disabledAt = Date.now();
    // The phone's session was last used long ago: it runs out in a day, the laptop's in 30.
    await database.db
      .update(sessionTable)
      .set({ expiresAt: new Date(disabledAt + 24 * 60 * 60 * 1000) })
      .where(eq(sessionTable.id, await sessionIdOf(database, erinPhone)));
    expect((await setStatus(database, ada.browser, erinId, "disabled")).status).toBe(200);
    const reason = `/login?next=${encodeURIComponent(PAGE)}&reason=disabled`;
    const plain = `/login?next=${encodeURIComponent(PAGE)}`;
    expect(await signInPageFor(database, erinPhone)).toBe(reason);

    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      // Two days on, the phone's cookie would have been signed out anyway: it is told nothing
      // more. The laptop's session would still have run, so it is still told why.
      vi.setSystemTime(disabledAt + 2 * 24 * 60 * 60 * 1000);
      expect(await signInPageFor(database, erinPhone)).toBe(plain);
      expect(await listChats(database, erinPhone)).toEqual({
        status: 401,
        code: "unauthorized:auth",
      });
      expect(await signInPageFor(database, erin.browser)).toBe(reason);
      // The next disable drops the rows that ran out, whoever's they were.
      const frank = await register(database, "frank@example.com");
      const frankId = (await sessionOf(database, frank.browser))?.user.id ?? "";
      const before = await database.db.select().from(disabledSession);
      expect(before.filter((row) => row.userId === erinId)).toHaveLength(2);
      expect((await setStatus(database, ada.browser, frankId, "disabled")).status).toBe(200);
      const after = await database.db.select().from(disabledSession);
      expect(after.map((row) => row.userId).sort()).toEqual([erinId, frankId].sort());
      expect(await signInPageFor(database, erin.browser)).toBe(reason);
      expect(await signInPageFor(database, frank.browser)).toBe(reason);

      // 31 days on, the laptop's would have run out too.
      vi.setSystemTime(disabledAt + 31 * 24 * 60 * 60 * 1000);
      expect(await signInPageFor(database, erin.browser)).toBe(plain);
    } finally {
      vi.useRealTimers();
    }
  });
});
