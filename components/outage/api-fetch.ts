import {
  ACCOUNT_DISABLED_CODE,
  disabledSignInHref,
  returnPath,
  signInHref,
} from "@/lib/auth/return-path";
import { serverClock } from "../server-clock";

/** Fired when Fold's API answers 503: its database is unreachable (lib/errors.ts). */
export const OUTAGE_EVENT = "fold:database-unavailable";
/** Fired when it answers again: hooks that failed during the outage load again. */
export const RECOVERED_EVENT = "fold:database-recovered";

/**
 * `fetch` for Fold's own API: a 503 saying its database is unreachable also tells the outage banner
 * to show and start retrying.
 * When Fold cannot be reached at all (offline, the server restarting) it answers like a failed
 * request, a 502 whose message says so, so every caller's `response.ok` check shows it
 * rather than the click doing nothing; an aborted request still throws. A failure that is not
 * Fold's (a proxy's HTML error page while Fold restarts) is answered the same way, in Fold's
 * error shape, so it reads as a refusal, never as a page of HTML. A browser whose session ended
 * meanwhile (signed out in another tab, the account deleted or disabled) is sent to sign in
 * (`signInIfSessionEnded`).
 */
export async function apiFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  let response: Response;
  const sentAt = Date.now();
  try {
    response = await fetch(input, init);
    serverClock.note(response.headers.get("date"), sentAt, Date.now());
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    return Response.json(
      {
        error: {
          code: "unavailable:network",
          message: "Fold could not be reached. Check the connection, then try again.",
        },
      },
      { status: 502 },
    );
  }
  // Not Fold's answer: something in front of it failed (a proxy while Fold restarts).
  const foldAnswer = /[/+]json\b/.test(response.headers.get("content-type") ?? "");
  // Fold's other 503s (a model that is unavailable, Stop unable to reach a reply) are its
  // callers' to show: the database is fine.
  if (response.status === 503 && (!foldAnswer || (await codeOf(response)) === DATABASE_DOWN)) {
    window.dispatchEvent(new Event(OUTAGE_EVENT));
  }
  if (foldAnswer) await signInIfSessionEnded(response);
  if (response.status >= 500 && !foldAnswer) {
    return Response.json(
      {
        error: {
          code: "unavailable:upstream",
          message: `Fold could not be reached (${response.status}). Try again in a moment.`,
        },
      },
      { status: response.status, headers: retryAfterOf(response) },
    );
  }
  return response;
}

function retryAfterOf(response: Response): HeadersInit {
  const retryAfter = response.headers.get("retry-after");
  return retryAfter ? { "retry-after": retryAfter } : {};
}

const DATABASE_DOWN = "unavailable:database";
/** The code of the 401 an API call without a session gets (lib/auth/guards.ts, lib/errors.ts). */
const SIGNED_OUT_CODE = "unauthorized:auth";

/**
 * An answer saying the browser's session is over sends it to the sign-in page, which comes back
 * to this page (as a page load does): the page holds nothing the browser may still do. A 401
 * (signed out in another tab, the session expired, the account deleted), or a 403 saying the
 * account was disabled, which the sign-in page then says. The caller still gets the answer, to
 * show until the page goes.
 */
export async function signInIfSessionEnded(response: Response): Promise<void> {
  if (response.status !== 401 && response.status !== 403) return;
  const code = await codeOf(response);
  const disabled = response.status === 403 && code === ACCOUNT_DISABLED_CODE;
  if (!disabled && !(response.status === 401 && code === SIGNED_OUT_CODE)) return;
  const { pathname, search } = window.location;
  const here = returnPath(`${pathname}${search}`);
  window.location.assign(disabled ? disabledSignInHref(here) : signInHref(here));
}

/** The code of Fold's error answer (lib/errors.ts), read from a copy; undefined for none. */
async function codeOf(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.clone().json()) as { error?: { code?: unknown } } | null;
    return typeof body?.error?.code === "string" ? body.error.code : undefined;
  } catch {
    return undefined;
  }
}
