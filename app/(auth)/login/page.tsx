import { redirect } from "next/navigation";
import { AuthForm } from "@/components/auth/auth-form";
import { currentPageUser } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

export default async function LoginPage() {
  if (await currentPageUser()) redirect("/");
  return <AuthForm mode="login" />;
}
