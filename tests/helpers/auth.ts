import * as authRoute from "@/app/api/auth/[...all]/route";
import type { Database } from "@/lib/db/client";
import { PASSWORD, signUpBody } from "./account";
import { anonymous, type Browser, call } from "./http";

export { PASSWORD };

/** Registers through better-auth's real endpoint; the browser keeps the session cookie. */
export async function register(database: Database, email: string, name?: string) {
  const browser = anonymous();
  const response = await call(database, authRoute.POST, {
    path: "/api/auth/sign-up/email",
    method: "POST",
    body: signUpBody(email, name),
    browser,
  });
  return { response, browser };
}

export async function signIn(database: Database, email: string, password = PASSWORD) {
  const browser = anonymous();
  const response = await call(database, authRoute.POST, {
    path: "/api/auth/sign-in/email",
    method: "POST",
    body: { email, password },
    browser,
  });
  return { response, browser };
}

export async function signOut(database: Database, browser: Browser) {
  return call(database, authRoute.POST, {
    path: "/api/auth/sign-out",
    method: "POST",
    body: {},
    browser,
  });
}

export async function sessionOf(database: Database, browser: Browser) {
  const response = await call(database, authRoute.GET, { path: "/api/auth/get-session", browser });
  return (await response.json()) as {
    user: { id: string; email: string; role: string; status: string };
  } | null;
}
