import { getAuth } from "@/lib/auth/server";
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

/** Sign-in and sign-up are rate limited per client address first. */
export const POST = route<{ all: string[] }>(
  async (request) => (await limitAuthRequest(request)) ?? handle(request),
  { checkOrigin: false },
);
