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

/** Where a signed-in user's password is checked (better-auth answers a wrong one 400). */
const PASSWORD_CHANGE = "/change-password";

const LIMITED_ENDPOINTS: ReadonlyArray<[suffix: string, limit: RateLimitName]> = [
  ["/sign-in/email", "sign-in"],
  // A wrong current password is told apart from a right one: a guess, as at sign-in.
  [PASSWORD_CHANGE, "sign-in"],
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

/** A sign-in as its wrong-password limit counts it: the account it names, and the body to send on. */
export type SignIn = { account: string; body: string };

/**
 * The account an email sign-in names, as its wrong-password limit keys it (a hash of the
 * address as better-auth matches it: trimmed, lower case), and the body better-auth is to read:
 * the JSON Fold read, written out again, so the address counted is the one checked whatever
 * the request's bytes held (a second byte-order mark, say, that one reader skips and another
 * does not). Null for any other request. A sign-in must come as JSON, as Fold's form sends
 * it, and name an email: in a form body a repeated `email` is read last by better-auth, and a
 * body Fold could not read would have gone on uncounted.
 */
export function signInAccount(request: Request, body: string | undefined): SignIn | null {
  if (!pathOf(request).endsWith("/sign-in/email")) return null;
  if (mediaType(request) !== "application/json") {
    throw new AppError("bad_request:body", "Sign in with a JSON body.");
  }
  const parsed = jsonObject(body);
  const email = parsed?.email;
  const account = typeof email === "string" ? accountOfEmail(email) : null;
  if (!parsed || account === null) {
    throw new AppError("bad_request:body", "Sign in with a JSON body that gives an email.");
  }
  return { account, body: JSON.stringify(parsed) };
}

/** The request's media type, without its parameters, in lower case ("" when none is given). */
const mediaType = (request: Request) =>
  (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";

function jsonObject(body: string | undefined): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(body ?? "");
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
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
  const email = jsonObject(body)?.email;
  return typeof email === "string" ? accountOfEmail(email) : null;
}

const accountOfEmail = (email: string) =>
  email.trim() === ""
    ? null
    : createHash("sha256").update(email.trim().toLowerCase()).digest("base64url");

/**
 * The account a password change checks the current password of (the session's, by its email),
 * keyed as `signInAccount` keys it: its wrong passwords count with those of sign-in, so a
 * session (a stolen cookie) cannot guess the password it does not know. Null for any other
 * request, or one without a session (better-auth answers it).
 */
export async function passwordChangeAccount(
  request: Request,
  sessionEmail: () => Promise<string | null>,
): Promise<string | null> {
  if (!pathOf(request).endsWith(PASSWORD_CHANGE)) return null;
  const email = await sessionEmail();
  return email ? accountOfEmail(email) : null;
}

/**
 * What an answer says of the password it checked: right, wrong (the count keeps its point), or
 * neither (another refusal: the point goes back). Sign-in answers a wrong one 401, a password
 * change 400 with better-auth's INVALID_PASSWORD.
 */
export async function passwordOutcome(
  request: Request,
  response: Response,
): Promise<"right" | "wrong" | "other"> {
  if (response.status === 200) return "right";
  if (!pathOf(request).endsWith(PASSWORD_CHANGE))
    return response.status === 401 ? "wrong" : "other";
  if (response.status !== 400) return "other";
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as { code?: unknown } | null;
  return body?.code === "INVALID_PASSWORD" ? "wrong" : "other";
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
): Promise<
  { refused: Response } | { settle: (outcome: "right" | "wrong" | "other") => Promise<void> }
> {
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
    settle: async (outcome) => {
      if (outcome === "wrong") return;
      try {
        if (outcome === "right") await resetRateLimit(limit, key);
        else await point?.refund();
      } catch (error) {
        log.warn({ err: error }, "rate limit: a sign-in's outcome could not be counted");
      }
    },
  };
}
