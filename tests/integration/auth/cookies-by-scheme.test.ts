import { expect, it, vi } from "vitest";

// `npm start` runs in production, and nobody has set BETTER_AUTH_URL (zero setup).
vi.hoisted(() => {
  Object.assign(process.env, { NODE_ENV: "production" });
  delete process.env.TEST;
  delete process.env.BETTER_AUTH_URL;
});

import * as authRoute from "@/app/api/auth/[...all]/route";
import * as chatsRoute from "@/app/api/chats/route";
import { signUpBody } from "../../helpers/account";
import { describeEachDriver } from "../../helpers/databases";
import { anonymous, call } from "../../helpers/http";

/**
 * A browser keeps a cookie marked Secure only over HTTPS (or from localhost): a server opened
 * over plain HTTP from another machine on the LAN must set its session cookies without it, or
 * every sign-in lands back on the sign-in page. Reached over HTTPS, they are marked Secure.
 */

/** A request as a browser on the LAN sends it to http://192.168.1.20:3000, or over HTTPS behind a proxy. */
const addressed = (scheme: "http" | "https") => ({
  host: "192.168.1.20:3000",
  origin: `${scheme}://192.168.1.20:3000`,
  "x-forwarded-proto": scheme,
});

const sessionCookie = (response: Response) =>
  response.headers.getSetCookie().find((c) => /better-auth\.session_token=/.test(c)) ?? "";

describeEachDriver("session cookies without BETTER_AUTH_URL", (use) => {
  it("are kept over plain HTTP from the LAN, and marked Secure over HTTPS", async () => {
    const database = use();
    const browser = anonymous();
    const overHttp = await call(database, authRoute.POST, {
      path: "/api/auth/sign-up/email",
      method: "POST",
      body: signUpBody("lan@example.com"),
      browser,
      headers: addressed("http"),
    });
    expect(overHttp.status).toBe(200);
    const cookie = sessionCookie(overHttp);
    expect(cookie).toMatch(/^better-auth\.session_token=/);
    expect(cookie).not.toMatch(/;\s*secure/i);
    // Every cookie the answer sets, the sign-in-device one included.
    for (const set of overHttp.headers.getSetCookie()) expect(set).not.toMatch(/;\s*secure/i);
    // The session the browser kept is a session.
    const chats = await call(database, chatsRoute.GET, {
      path: "/api/chats",
      browser,
      headers: addressed("http"),
    });
    expect(chats.status).toBe(200);

    const overHttps = await call(database, authRoute.POST, {
      path: "/api/auth/sign-in/email",
      method: "POST",
      body: { email: "lan@example.com", password: signUpBody("lan@example.com").password },
      browser: anonymous(),
      headers: addressed("https"),
    });
    expect(overHttps.status).toBe(200);
    expect(overHttps.headers.getSetCookie().length).toBeGreaterThan(0);
    for (const set of overHttps.headers.getSetCookie()) expect(set).toMatch(/;\s*Secure/);
    // Behind a chain of proxies, the one nearest the browser says (the first entry).
    const chained = await call(database, authRoute.POST, {
      path: "/api/auth/sign-in/email",
      method: "POST",
      body: { email: "lan@example.com", password: signUpBody("lan@example.com").password },
      browser: anonymous(),
      headers: { ...addressed("https"), "x-forwarded-proto": "HTTPS, http" },
    });
    expect(chained.status).toBe(200);
    expect(sessionCookie(chained)).toMatch(/;\s*Secure/);
  });
});
