import type { Metadata } from "next";
import { AuthForm } from "@/components/auth/auth-form";
import { type PageSearchParams, pageAfterSignIn, signedOutByDisable } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { countUsers } from "@/lib/db/queries/users";

export const metadata: Metadata = { title: "Sign in · Fold" };

export const dynamic = "force-dynamic";

export default async function LoginPage({ searchParams }: { searchParams: PageSearchParams }) {
  const next = await pageAfterSignIn(searchParams);
  // A fresh install: say how to begin instead of asking for an account nobody has.
  const firstUser = (await countUsers(await getDb())) === 0;
  // Only to the browser whose session the disable ended (the address alone proves nothing).
  const warning = (await signedOutByDisable(searchParams))
    ? "An admin disabled this account, so you were signed out. Ask the server's admin if that is a mistake."
    : undefined;
  return <AuthForm mode="login" firstUser={firstUser} next={next} warning={warning} />;
}
