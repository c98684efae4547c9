import type { Metadata } from "next";
import { AuthForm } from "@/components/auth/auth-form";
import { type PageSearchParams, pageAfterSignIn } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { countUsers } from "@/lib/db/queries/users";

export const metadata: Metadata = { title: "Sign in · Fold" };

export const dynamic = "force-dynamic";

export default async function LoginPage({ searchParams }: { searchParams: PageSearchParams }) {
  const next = await pageAfterSignIn(searchParams);
  // A fresh install: say how to begin instead of asking for an account nobody has.
  const firstUser = (await countUsers(await getDb())) === 0;
  return <AuthForm mode="login" firstUser={firstUser} next={next} />;
}
