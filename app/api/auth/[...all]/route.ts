import { secureOverHttps } from "@/lib/auth/secure-cookies";
import { getAuth } from "@/lib/auth/server";
import { readBodyText } from "@/lib/http/body";
import { refuseUnstorable, route } from "@/lib/http/route";
import {
  limitAuthRequest,
  passwordChangeAccount,
  passwordOutcome,
  signInAccount,
  signUpAccount,
  takeSignInAttempt,
} from "@/lib/limits/auth-rate-limit";
import { rememberSignInDevice, signInDevice } from "@/lib/limits/sign-in-device";

export const dynamic = "force-dynamic";

/**
 * better-auth stores what its routes are sent (a token, a name) without Fold's net under every
 * schema: text Postgres cannot store (a NUL) is refused here with a 400, in the query and in a
 * JSON or form body, where it would otherwise fail the query and answer 500 (or 422).
 */
function refuseUnstorableInput(request: Request, body?: string): void {
  // Every pair: a repeated key reaches better-auth as a list.
  refuseUnstorable([...new URL(request.url).searchParams], "bad_request:query");
  if (!body) return;
  // Read as better-auth reads it: the media type in any case, and a JSON body behind any
  // number of byte-order marks (it strips them; JSON.parse would not, and the check be skipped).
  const type = (request.headers.get("content-type") ?? "").toLowerCase();
  if (type.includes("application/x-www-form-urlencoded")) {
    refuseUnstorable([...new URLSearchParams(body)], "bad_request:body");
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.replace(/^\uFEFF+/, ""));
  } catch {
    return; // Neither: better-auth answers it.
  }
  refuseUnstorable(parsed, "bad_request:body");
}

async function handle(request: Request, body?: string): Promise<Response> {
  refuseUnstorableInput(request, body);
  const auth = await getAuth();
  if (body === undefined) return secureOverHttps(request, await auth.handler(request));
  const { method, headers, signal } = request;
  const response = await auth.handler(
    new Request(request.url, { method, headers, signal, body: body || undefined }),
  );
  return secureOverHttps(request, response);
}

// better-auth checks the origin of its own routes (checkOrigin: false); the wrapper still
// answers an outage with 503 and logs failures without their SQL parameters.
export const GET = route<{ all: string[] }>((request) => handle(request), { checkOrigin: false });

/** Far more than any auth form sends (a name, an email, a password). */
const AUTH_BODY_MAX_BYTES = 16_384;

/**
 * Sign-in, a password change and sign-up are rate limited per client address first, and an
 * email sign-in or a password change by its account's wrong passwords from any address (from a browser the account signed in on before,
 * by that browser's own: lib/limits/sign-in-device.ts, which a right password renews). The body is read here, up to
 * its limit (413 beyond): better-auth would buffer any size before its own checks.
 */
export const POST = route<{ all: string[] }>(
  async (request) => {
    const limited = await limitAuthRequest(request);
    if (limited) return limited;
    const body = await readBodyText(request, AUTH_BODY_MAX_BYTES);
    const signingIn = signInAccount(request, body);
    const account =
      signingIn?.account ??
      (await passwordChangeAccount(request, async () => {
        const session = await (await getAuth()).api.getSession({ headers: request.headers });
        return session?.user.email ?? null;
      }));
    if (!account) {
      const response = await handle(request, body);
      return rememberSignInDevice(request, signUpAccount(request, body), response);
    }
    const attempt = await takeSignInAttempt(account, signInDevice(request.headers, account));
    if ("refused" in attempt) return attempt.refused;
    const response = await handle(request, signingIn?.body ?? body);
    await attempt.settle(await passwordOutcome(request, response));
    // A password change leaves the browser's sign-in record as it was.
    return signingIn ? rememberSignInDevice(request, account, response) : response;
  },
  { checkOrigin: false },
);
