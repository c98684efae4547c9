import type { Metadata } from "next";
import { UsersAdmin } from "@/components/admin/users-admin";
import { requirePageAdmin } from "@/lib/admin/page-guard";
import { env } from "@/lib/env";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Users · Admin · Fold" };

export default async function AdminUsersPage() {
  const admin = await requirePageAdmin();
  return <UsersAdmin selfId={admin.id} registration={env().registration} />;
}
