import { type NextRequest, NextResponse } from "next/server";
import { PAGE_PATH_HEADER } from "@/lib/auth/return-path";
import { contentSecurityPolicy, NONCE_HEADER, newNonce } from "@/lib/http/security-headers";

/**
 * Runs before every page: a fresh CSP nonce per request, in the response's policy and in the
 * request headers, where Next reads it while rendering and puts it on its scripts; and the
 * page asked for, which a page that needs an account carries to the sign-in page.
 */
export function proxy(request: NextRequest) {
  const nonce = newNonce();
  const policy = contentSecurityPolicy(nonce, process.env.NODE_ENV === "development");
  const headers = new Headers(request.headers);
  headers.set(NONCE_HEADER, nonce);
  headers.set("content-security-policy", policy);
  headers.set(PAGE_PATH_HEADER, `${request.nextUrl.pathname}${request.nextUrl.search}`);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("content-security-policy", policy);
  return response;
}

export const config = {
  matcher: [
    {
      // Pages only: API routes get a fixed policy (next.config.ts); assets need none.
      source: "/((?!api/|_next/static|_next/image|favicon.ico|.*\\.[a-z0-9]+$).*)",
      missing: [
        { type: "header", key: "next-router-prefetch" },
        { type: "header", key: "purpose", value: "prefetch" },
      ],
    },
  ],
};
