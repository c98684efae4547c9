/**
 * Who may have an account (DESIGN §16), as better-auth database hooks: REGISTRATION decides
 * what a new account starts as, the first account becomes the admin atomically, and a disabled
 * account cannot start a session.
 */
import { APIError, createAuthMiddleware } from "better-auth/api";
import type { Db } from "@/lib/db/client";
import { claimFirstAdmin, countUsers, deleteUserRow, statusOf } from "@/lib/db/queries/users";
import type { UserStatus } from "@/lib/db/schema";
import { env, type RegistrationMode } from "@/lib/env";

/** A display name's limit, as the sign-up form's field has it. */
export const USER_NAME_MAX_CHARS = 100;
/**
 * An address's limit, as mail servers have it (RFC 5321): longer ones passed better-auth's
 * format check and were then refused by the unique index on emails (a vague 422).
 */
export const USER_EMAIL_MAX_CHARS = 254;

/** What a new account starts as; the first account is made admin right after it is created. */
export function initialStatus(mode: RegistrationMode): UserStatus {
  return mode === "open" ? "active" : "pending";
}

const closed = () =>
  new APIError("FORBIDDEN", {
    code: "REGISTRATION_CLOSED",
    message: "Registration is closed on this server. Ask its admin for an account.",
  });

/** A name with nothing to show: only spaces, line breaks, control and format characters. */
const blank = (name: string) => name.replace(/[\p{Z}\p{Cc}\p{Cf}]/gu, "") === "";

/**
 * Checks of a sign-up run before better-auth looks at its email: a server closed to sign-ups,
 * and a name with nothing to show, are refused alike whether or not the email has an account
 * (better-auth answers an address it knows with 422 before the create hooks run, which told a
 * stranger which addresses have accounts).
 */
export function signUpCheck(db: Db) {
  return createAuthMiddleware(async (ctx) => {
    if (ctx.path !== "/sign-up/email") return;
    const name: unknown = ctx.body?.name;
    if (typeof name === "string" && blank(name)) {
      throw new APIError("BAD_REQUEST", {
        code: "NAME_REQUIRED",
        message: "Enter a name: it shows beside your chats and in the admin's list.",
      });
    }
    if (env().registration === "closed" && (await countUsers(db)) > 0) throw closed();
  });
}

export function registrationHooks(db: Db) {
  return {
    user: {
      create: {
        before: async (newUser: Record<string, unknown>) => {
          if (typeof newUser.name === "string" && newUser.name.length > USER_NAME_MAX_CHARS) {
            throw new APIError("BAD_REQUEST", {
              code: "NAME_TOO_LONG",
              message: `A name is at most ${USER_NAME_MAX_CHARS} characters.`,
            });
          }
          if (typeof newUser.email === "string" && newUser.email.length > USER_EMAIL_MAX_CHARS) {
            throw new APIError("BAD_REQUEST", {
              code: "EMAIL_TOO_LONG",
              message: `An email address is at most ${USER_EMAIL_MAX_CHARS} characters.`,
            });
          }
          const mode = env().registration;
          // "closed" still lets the first account in, or no one could ever run the server.
          if (mode === "closed" && (await countUsers(db)) > 0) throw closed();
          // Fold shows no pictures and has no way to check one: a sign-up's `image` (any text
          // better-auth takes, a `javascript:` URL as well) is not stored.
          return {
            data: { ...newUser, image: null, role: "user", status: initialStatus(mode) },
          };
        },
        after: async (created: { id: string }) => {
          if (await claimFirstAdmin(db, created.id)) return;
          // Closed, an account that is not the first came in only beside it: two sign-ups to an
          // empty server each counted no account before either was stored. It goes again.
          if (env().registration === "closed") {
            await deleteUserRow(db, created.id);
            throw closed();
          }
        },
      },
    },
    session: {
      create: {
        before: async (newSession: { userId: string }) => {
          if ((await statusOf(db, newSession.userId)) === "disabled") {
            throw new APIError("FORBIDDEN", {
              code: "ACCOUNT_DISABLED",
              message: "This account is disabled. Ask the server's admin.",
            });
          }
        },
      },
    },
  };
}
