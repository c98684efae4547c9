import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { WaitingApproval } from "@/components/auth/waiting-approval";
import { currentPageUser } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Waiting for approval · Fold" };

/** Where a signed-in account lands while an admin has not approved it (or has disabled it). */
export default async function WaitingPage() {
  const user = await currentPageUser();
  if (!user) redirect("/login");
  if (user.status === "active") redirect("/");
  return <WaitingApproval email={user.email} disabled={user.status === "disabled"} />;
}
