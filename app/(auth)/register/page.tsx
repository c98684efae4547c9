import { redirect } from "next/navigation";
import { AuthForm } from "@/components/auth/auth-form";
import { currentPageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { countUsers } from "@/lib/db/queries/users";

export const dynamic = "force-dynamic";

export default async function RegisterPage() {
  if (await currentPageUser()) redirect("/");
  const firstUser = (await countUsers(await getDb())) === 0;
  return <AuthForm mode="register" firstUser={firstUser} />;
}
