import type { Metadata } from "next";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { WaitingApproval } from "@/components/auth/waiting-approval";
import { currentPageUser, signInPage } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Waiting for approval · Fold" };

/** Where a signed-in account lands while an admin has not approved it (or has disabled it). */
export default async function WaitingPage() {
  const user = await currentPageUser();
  // An account disabled while it waited is told so on the sign-in page.
  if (!user) redirect(await signInPage(await headers()));
  if (user.status === "active") redirect("/");
  return <WaitingApproval email={user.email} disabled={user.status === "disabled"} />;
}
