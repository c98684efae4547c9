import { betterAuth } from "better-auth";
import { drizzleAdapter } from "better-auth/adapters/drizzle";
import type { Db } from "@/lib/db/client";
import { getDb } from "@/lib/db/client";
import { countUsers } from "@/lib/db/queries/users";
import * as schema from "@/lib/db/schema";
import { env } from "@/lib/env";
import { authSecret } from "./secret";

const PASSWORD_MIN_LENGTH = 8;
const PASSWORD_MAX_LENGTH = 128;
const SESSION_DAYS = 30;

/** The first account on a fresh install runs it; ADMIN_EMAILS names more admins. */
export function isAdminEmail(email: string): boolean {
  return env().adminEmails.includes(email.toLowerCase());
}

function requestOrigin(request: Request | undefined): string | undefined {
  const host = request?.headers.get("x-forwarded-host") ?? request?.headers.get("host");
  if (!host) return undefined;
  const proto =
    request?.headers.get("x-forwarded-proto") ??
    new URL(request?.url ?? "http://x").protocol.replace(":", "");
  return `${proto}://${host}`;
}

function createAuth(db: Db) {
  return betterAuth({
    appName: "Fold",
    logger: { disabled: env().logLevel === "silent" },
    secret: authSecret(),
    baseURL: env().authUrl,
    // Without a configured URL, trust exactly the host the browser addressed:
    // a same-origin form post passes, a cross-site one still does not.
    trustedOrigins: env().authUrl ? undefined : (request) => [requestOrigin(request)],
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
    session: { expiresIn: SESSION_DAYS * 24 * 60 * 60 },
    user: {
      additionalFields: {
        role: { type: "string", required: false, defaultValue: "user", input: false },
      },
    },
    rateLimit: {
      customRules: {
        "/sign-in/email": { window: 60, max: 20 },
        "/sign-up/email": { window: 60, max: 10 },
      },
    },
    databaseHooks: {
      user: {
        create: {
          before: async (newUser) => {
            const admin = (await countUsers(db)) === 0 || isAdminEmail(newUser.email);
            return { data: { ...newUser, role: admin ? "admin" : "user" } };
          },
        },
      },
    },
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
