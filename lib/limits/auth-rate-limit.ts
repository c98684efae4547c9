/** Sign-in and sign-up attempts, limited per client address before better-auth sees them. */
import { env } from "@/lib/env";
import { clientAddress } from "./client-address";
import { consumeRateLimit, type RateLimitName } from "./rate-limit";
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
  try {
    await consumeRateLimit(limit, clientAddress(request.headers, env().trustProxy));
    return null;
  } catch (error) {
    if (!(error instanceof TooManyRequestsError)) throw error;
    const limited = error.toResponse();
    const { error: body } = (await limited.json()) as { error: Record<string, unknown> };
    return Response.json(body, { status: limited.status, headers: limited.headers });
  }
}
