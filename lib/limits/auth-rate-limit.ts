/**
 * Sign-in and sign-up attempts, limited per client address before better-auth sees them, and
 * wrong passwords per account from any address (a guesser spread over many addresses).
 */
import { createHash } from "node:crypto";
import { env } from "@/lib/env";
import { log } from "@/lib/log";
import { clientAddress } from "./client-address";
import {
  assertRateLimitLeft,
  consumeRateLimit,
  type RateLimitName,
  resetRateLimit,
} from "./rate-limit";
import { TooManyRequestsError } from "./too-many-requests";

const LIMITED_ENDPOINTS: ReadonlyArray<[suffix: string, limit: RateLimitName]> = [
  ["/sign-in/email", "sign-in"],
  ["/sign-up/email", "sign-up"],
];

/**
 * A 429 response when this auth request is over its limit, else null (go ahead). Shaped like
 * better-auth's own errors (`{ code, message }`), so the sign-in form shows the message.
 */
export async function limitAuthRequest(request: Request): Promise<Response | null> {
  const path = new URL(request.url).pathname.replace(/\/+$/, "");
  const limit = LIMITED_ENDPOINTS.find(([suffix]) => path.endsWith(suffix))?.[1];
  if (!limit) return null;
  return refusal(() =>
    consumeRateLimit(limit, clientAddress(request.headers, env().trustProxy)).then(() => undefined),
  );
}

/** The 429 a limit's refusal makes, shaped as better-auth's errors; null when it went through. */
async function refusal(check: () => Promise<void>): Promise<Response | null> {
  try {
    await check();
    return null;
  } catch (error) {
    if (!(error instanceof TooManyRequestsError)) throw error;
    const limited = error.toResponse();
    const { error: body } = (await limited.json()) as { error: Record<string, unknown> };
    return Response.json(body, { status: limited.status, headers: limited.headers });
  }
}

/**
 * The account an email sign-in names, as its wrong-password limit keys it (a hash of the
 * address as better-auth matches it: trimmed, lower case); null for any other request.
 */
export function signInAccount(request: Request, body: string | undefined): string | null {
  if (!new URL(request.url).pathname.replace(/\/+$/, "").endsWith("/sign-in/email")) return null;
  let email: unknown;
  try {
    email = (JSON.parse(body ?? "") as { email?: unknown })?.email;
  } catch {
    email = new URLSearchParams(body ?? "").get("email");
  }
  if (typeof email !== "string" || email.trim() === "") return null;
  return createHash("sha256").update(email.trim().toLowerCase()).digest("base64url");
}

/** A 429 when the account has had too many wrong passwords lately, from wherever; else null. */
export function limitAccountSignIn(account: string): Promise<Response | null> {
  return refusal(() => assertRateLimitLeft("sign-in-account", account));
}

/**
 * Counts a wrong password (401) against the account; a right one (200) starts its count over.
 * A store that fails is logged: the sign-in's own answer stands.
 */
export async function noteSignIn(account: string, status: number): Promise<void> {
  try {
    if (status === 401) await consumeRateLimit("sign-in-account", account);
    else if (status === 200) await resetRateLimit("sign-in-account", account);
  } catch (error) {
    // The last point spent: the next attempt is refused by limitAccountSignIn.
    if (error instanceof TooManyRequestsError) return;
    log.warn({ err: error }, "rate limit: a sign-in's outcome could not be counted");
  }
}
