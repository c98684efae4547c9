import type { Metadata } from "next";
import { AuthForm } from "@/components/auth/auth-form";
import { type PageSearchParams, pageAfterSignIn } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { countUsers } from "@/lib/db/queries/users";
import { env } from "@/lib/env";

export const metadata: Metadata = { title: "Create account · Fold" };

export const dynamic = "force-dynamic";

/** What the form says about the account it creates, by REGISTRATION. */
const NOTICES = {
  open: undefined,
  approval: "An admin approves new accounts before they can chat.",
  closed: "Registration is closed on this server. Ask its admin for an account.",
} as const;

export default async function RegisterPage({ searchParams }: { searchParams: PageSearchParams }) {
  const next = await pageAfterSignIn(searchParams);
  const firstUser = (await countUsers(await getDb())) === 0;
  const mode = env().registration;
  return (
    <AuthForm
      mode="register"
      next={next}
      firstUser={firstUser}
      notice={firstUser ? undefined : NOTICES[mode]}
      closed={!firstUser && mode === "closed"}
    />
  );
}
