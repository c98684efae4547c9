import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { AuthForm } from "@/components/auth/auth-form";
import { returnPath } from "@/lib/auth/return-path";
import { currentPageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { countUsers } from "@/lib/db/queries/users";

export const metadata: Metadata = { title: "Sign in · Fold" };

export const dynamic = "force-dynamic";

export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  // The page a signed-out visitor asked for: where the form goes once they are in.
  const next = returnPath((await searchParams).next);
  if (await currentPageUser()) redirect(next ?? "/");
  // A fresh install: say how to begin instead of asking for an account nobody has.
  const firstUser = (await countUsers(await getDb())) === 0;
  return <AuthForm mode="login" firstUser={firstUser} next={next} />;
}
