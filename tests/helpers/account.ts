/**
 * A test user as Fold's sign-up form makes one, and the session cookie a browser keeps for
 * it: shared by the in-process route calls (auth.ts, http.ts), the clients of `next start`
 * instances (instances.ts) and the browsers of e2e specs and benchmarks. Imports nothing of
 * the app, so Playwright specs can load it.
 */

export const PASSWORD = "correct horse battery";

/** The body of POST /api/auth/sign-up/email, as the registration form sends it. */
export function signUpBody(email: string, name = email.split("@")[0] ?? "user") {
  return { email, password: PASSWORD, name };
}

/** A browser's cookie jar: the `cookie` header it sends. */
export type CookieJar = { cookie: string };

/** Keeps the cookies a response sets, as a browser does: a later one replaces, an expired one goes. */
export function keepCookies(jar: CookieJar, response: Response): void {
  for (const setCookie of response.headers.getSetCookie()) {
    const [pair] = setCookie.split(";");
    if (!pair) continue;
    const [name] = pair.split("=");
    const rest = jar.cookie.split("; ").filter((c) => c && !c.startsWith(`${name}=`));
    const expired = /max-age=0/i.test(setCookie) || pair.endsWith("=");
    jar.cookie = (expired ? rest : [...rest, pair]).join("; ");
  }
}

/** The `cookie` header for cookies a Playwright browser context holds. */
export function cookieHeader(cookies: ReadonlyArray<{ name: string; value: string }>): string {
  return cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join("; ");
}

/** A `cookie` header as cookies for a Playwright browser context on `url`. */
export function browserCookies(header: string, url: string) {
  return header
    .split("; ")
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf("=");
      return { name: pair.slice(0, at), value: pair.slice(at + 1), url };
    });
}
