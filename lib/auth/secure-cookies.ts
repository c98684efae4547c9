import { env } from "@/lib/env";
import { requestOrigin } from "@/lib/http/origin";

/**
 * Whether a browser keeps Fold's session cookies depends on how it reached Fold: one marked
 * Secure is refused over plain HTTP from any host but localhost, so a server opened at
 * http://192.168.1.20:3000 from a phone on the LAN would never keep a session (sign-in
 * succeeds and lands back on the sign-in page). With BETTER_AUTH_URL, its scheme says which
 * (better-auth's own rule). Without it, Fold cannot know at start: the cookies are named
 * without the `__Secure-` prefix, and each response marks them Secure when its request came
 * over HTTPS (`secureOverHttps`).
 */
export function cookieSecurityOptions(): { useSecureCookies?: boolean } {
  return env().authUrl ? {} : { useSecureCookies: false };
}

/** Whether a Set-Cookie header value carries the Secure attribute. */
export const marksSecure = (setCookie: string) => /;\s*secure\s*(;|$)/i.test(setCookie);

/** `response` with every cookie it sets marked Secure when `request` came over HTTPS and no BETTER_AUTH_URL decided it. */
export function secureOverHttps(request: Request, response: Response): Response {
  if (env().authUrl || !requestOrigin(request)?.startsWith("https://")) return response;
  const cookies = response.headers.getSetCookie();
  if (cookies.length === 0) return response;
  const headers = new Headers(response.headers);
  headers.delete("set-cookie");
  for (const cookie of cookies) {
    headers.append("set-cookie", marksSecure(cookie) ? cookie : `${cookie}; Secure`);
  }
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}
