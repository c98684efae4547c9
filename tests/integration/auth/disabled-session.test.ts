import { expect, it } from "vitest";
import * as adminUser from "@/app/api/admin/users/[id]/route";
import * as chatsRoute from "@/app/api/chats/route";
import { PAGE_PATH_HEADER } from "@/lib/auth/return-path";
import { signInPage } from "@/lib/auth/session";
import { type Database, withDatabase } from "@/lib/db/client";
import { disabledSession } from "@/lib/db/schema";
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
});
