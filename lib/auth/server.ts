import { betterAuth } from "better-auth";
import { drizzleAdapter } from "better-auth/adapters/drizzle";
import type { Db } from "@/lib/db/client";
import { getDb } from "@/lib/db/client";
import * as schema from "@/lib/db/schema";
import { env } from "@/lib/env";
import { requestOrigin } from "@/lib/http/origin";
import { authLog } from "@/lib/log";
import { cookieCacheVersion, SESSION_COOKIE_CACHE_SECONDS } from "./cookie-cache";
import { registrationHooks, signUpCheck } from "./registration";
import { authSecret } from "./secret";
import { cookieSecurityOptions } from "./secure-cookies";

const PASSWORD_MIN_LENGTH = 8;
const PASSWORD_MAX_LENGTH = 128;
const SESSION_DAYS = 30;

function createAuth(db: Db) {
  // better-auth reads BETTER_AUTH_URL itself when given no base URL: a value Fold refused (and
  // said so at startup) would make every sign-in and session check fail.
  if (!env().authUrl) delete process.env.BETTER_AUTH_URL;
  return betterAuth({
    appName: "Fold",
    // Its lines go through Fold's logger, which scrubs SQL parameters (session tokens) from errors.
    logger: { disabled: env().logLevel === "silent", log: authLog },
    // Errors it does not answer itself reach Fold's route wrapper (503 on an outage, error id).
    onAPIError: { throw: true },
    secret: authSecret(),
    baseURL: env().authUrl,
    // Without a configured URL, trust exactly the host the browser addressed:
    // a same-origin form post passes, a cross-site one still does not.
    // Fold's own routes apply the same rule (lib/http/origin.ts).
    trustedOrigins: env().authUrl
      ? undefined
      : (request) => (request ? [requestOrigin(request)] : []),
    database: drizzleAdapter(db, {
      provider: "pg",
      schema: {
        user: schema.user,
        session: schema.session,
        account: schema.account,
        verification: schema.verification,
      },
    }),
    emailAndPassword: {
      enabled: true,
      autoSignIn: true,
      minPasswordLength: PASSWORD_MIN_LENGTH,
      maxPasswordLength: PASSWORD_MAX_LENGTH,
    },
    session: {
      expiresIn: SESSION_DAYS * 24 * 60 * 60,
      // The signed session cookie saves the session lookup; its version check is one query
      // that keeps revocation immediate (lib/auth/cookie-cache.ts).
      cookieCache: {
        enabled: true,
        maxAge: SESSION_COOKIE_CACHE_SECONDS,
        version: cookieCacheVersion(db),
      },
    },
    user: {
      additionalFields: {
        role: { type: "string", required: false, defaultValue: "user", input: false },
        status: { type: "string", required: false, defaultValue: "active", input: false },
      },
    },
    // Its own limiter keys on X-Forwarded-For, which any client can write: Fold limits sign-in
    // and sign-up itself, on the socket's address (lib/limits/auth-rate-limit.ts).
    rateLimit: { enabled: false },
    // Fold has no profile page: /update-user would let an account set any name or picture
    // past Fold's own checks (and a null name came back a 500). Fold never asks
    // /verify-password, which tells a session whether a password is its account's: a guesser
    // with a session (a shared computer) would get past the sign-in limits that
    // /change-password is held to.
    disabledPaths: ["/update-user", "/verify-password"],
    // Secure as BETTER_AUTH_URL's scheme says; without it, per request (lib/auth/secure-cookies.ts).
    advanced: cookieSecurityOptions(),
    databaseHooks: registrationHooks(db),
    hooks: { before: signUpCheck(db) },
  });
}

export type Auth = ReturnType<typeof createAuth>;

// One auth instance per database: the process database in the app, a fresh
// one per test file in integration tests.
const instances = new WeakMap<Db, Auth>();

export async function getAuth(): Promise<Auth> {
  const db = await getDb();
  let auth = instances.get(db);
  if (!auth) {
    auth = createAuth(db);
    instances.set(db, auth);
  }
  return auth;
}
