/**
 * Sign-in and sign-up attempts, limited per client address before better-auth sees them, and
 * wrong passwords per account from any address (a guesser spread over many addresses).
 */
import { createHash } from "node:crypto";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { clientAddress } from "./client-address";
import { consumeRateLimit, type RateLimitName, type RatePoint, resetRateLimit } from "./rate-limit";
import { TooManyRequestsError } from "./too-many-requests";

const LIMITED_ENDPOINTS: ReadonlyArray<[suffix: string, limit: RateLimitName]> = [
  ["/sign-in/email", "sign-in"],
  ["/sign-up/email", "sign-up"],
];

/** The request's path without a trailing slash: what the endpoints are matched on. */
const pathOf = (request: Request) => new URL(request.url).pathname.replace(/\/+$/, "");

/**
 * A 429 response when this auth request is over its limit, else null (go ahead). Shaped like
 * better-auth's own errors (`{ code, message }`), so the sign-in form shows the message.
 */
export async function limitAuthRequest(request: Request): Promise<Response | null> {
  const path = pathOf(request);
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
 * address as better-auth matches it: trimmed, lower case); null for any other request. A
 * sign-in must come as JSON, as Fold's form sends it: in a form body a repeated `email` is read
 * last by better-auth, so a decoy first one would have been counted instead.
 */
export function signInAccount(request: Request, body: string | undefined): string | null {
  if (!pathOf(request).endsWith("/sign-in/email")) return null;
  if (!(request.headers.get("content-type") ?? "").includes("application/json")) {
    throw new AppError("bad_request:body", "Sign in with a JSON body.");
  }
  return accountOfJson(body);
}

/**
 * The account a sign-up names, keyed as `signInAccount` keys it; null for any other request or
 * a body that is not JSON (better-auth answers it).
 */
export function signUpAccount(request: Request, body: string | undefined): string | null {
  if (!pathOf(request).endsWith("/sign-up/email")) return null;
  return accountOfJson(body);
}

function accountOfJson(body: string | undefined): string | null {
  let email: unknown;
  try {
    email = (JSON.parse(body ?? "") as { email?: unknown } | null)?.email;
  } catch {
    return null; // better-auth refuses it
  }
  if (typeof email !== "string" || email.trim() === "") return null;
  return createHash("sha256").update(email.trim().toLowerCase()).digest("base64url");
}

/**
 * Spends a point of the account's wrong-password limit before its password is checked, so
 * guesses sent at once cannot all pass before any is counted: a 429 once they are spent. A
 * browser the account signed in on before (`device`, sign-in-device.ts) spends from its own
 * count instead, so strangers' guesses do not keep the owner out.
 */
export async function takeSignInAttempt(
  account: string,
  device: string | null,
): Promise<{ refused: Response } | { settle: (status: number) => Promise<void> }> {
  const [limit, key]: [RateLimitName, string] = device
    ? ["sign-in-device", `${account}:${device}`]
    : ["sign-in-account", account];
  let point: RatePoint | undefined;
  const refused = await refusal(async () => {
    point = await consumeRateLimit(limit, key);
  });
  if (refused) return { refused };
  return {
    // A right password starts the count over; an answer that is no wrong password gives the
    // point back. A store that fails is logged: the sign-in's own answer stands.
    settle: async (status) => {
      if (status === 401) return;
      try {
        if (status === 200) await resetRateLimit(limit, key);
        else await point?.refund();
      } catch (error) {
        log.warn({ err: error }, "rate limit: a sign-in's outcome could not be counted");
      }
    },
  };
}
