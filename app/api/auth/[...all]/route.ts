import { getAuth } from "@/lib/auth/server";
import { readBodyText } from "@/lib/http/body";
import { route } from "@/lib/http/route";
import { limitAuthRequest } from "@/lib/limits/auth-rate-limit";

export const dynamic = "force-dynamic";

async function handle(request: Request): Promise<Response> {
  const auth = await getAuth();
  return auth.handler(request);
}

// better-auth checks the origin of its own routes (checkOrigin: false); the wrapper still
// answers an outage with 503 and logs failures without their SQL parameters.
export const GET = route<{ all: string[] }>(handle, { checkOrigin: false });

/** Far more than any auth form sends (a name, an email, a password). */
const AUTH_BODY_MAX_BYTES = 16_384;

/**
 * Sign-in and sign-up are rate limited per client address first. The body is read here, up to
 * its limit (413 beyond): better-auth would buffer any size before its own checks.
 */
export const POST = route<{ all: string[] }>(
  async (request) => {
    const limited = await limitAuthRequest(request);
    if (limited) return limited;
    const body = await readBodyText(request, AUTH_BODY_MAX_BYTES);
    const { method, headers, signal } = request;
    return handle(new Request(request.url, { method, headers, signal, body: body || undefined }));
  },
  { checkOrigin: false },
);
