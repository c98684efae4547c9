import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";

/**
 * CSRF for Fold's own routes, by better-auth's rule for its routes: a request that changes
 * state must come from a trusted origin — the configured `BETTER_AUTH_URL`, or, without one,
 * exactly the host the browser addressed — and carry a JSON body. A cross-site form can send
 * neither a foreign page's Origin past this check nor `application/json` without a CORS
 * preflight, which Fold never grants.
 */

export const STATE_CHANGING_METHODS = ["POST", "PUT", "PATCH", "DELETE"] as const;

/**
 * The origin the browser addressed, as better-auth derives it (behind a proxy, its forwarded
 * host). Proxies along a chain append to the forwarded headers: the first entry is the one the
 * browser reached.
 */
export function requestOrigin(request: Request): string | undefined {
  const first = (name: string) => request.headers.get(name)?.split(",")[0]?.trim() || undefined;
  const host = first("x-forwarded-host") ?? request.headers.get("host");
  if (!host) return undefined;
  const proto =
    first("x-forwarded-proto")?.toLowerCase() ?? new URL(request.url).protocol.replace(":", "");
  return `${proto}://${host}`;
}

/** Origins a state-changing request may come from. */
export function trustedOrigins(request: Request): string[] {
  const configured = env().authUrl;
  if (configured) return [new URL(configured).origin];
  const addressed = requestOrigin(request);
  return [new URL(request.url).origin, ...(addressed ? [addressed] : [])];
}

/** Where the request says it comes from: `Origin`, else the origin of `Referer`. */
function claimedOrigin(request: Request): string | null {
  const origin = request.headers.get("origin");
  if (origin) return origin;
  const referer = request.headers.get("referer");
  if (!referer) return null;
  try {
    return new URL(referer).origin;
  } catch {
    return null;
  }
}

function isJson(request: Request): boolean {
  const type = request.headers.get("content-type") ?? "";
  return type.split(";")[0]?.trim().toLowerCase() === "application/json";
}

/** Throws unless a state-changing request comes from a trusted origin with a JSON body. */
export function checkStateChange(request: Request): void {
  if (!(STATE_CHANGING_METHODS as readonly string[]).includes(request.method)) return;
  const claimed = claimedOrigin(request);
  if (!claimed || claimed === "null" || !trustedOrigins(request).includes(claimed)) {
    throw new AppError(
      "forbidden:origin",
      "This request did not come from Fold's own pages, so it was refused.",
    );
  }
  if (!isJson(request)) {
    throw new AppError(
      "unsupported_media_type:body",
      "Send the request body as JSON (Content-Type: application/json).",
    );
  }
}
