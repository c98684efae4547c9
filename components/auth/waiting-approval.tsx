"use client";

import { Hourglass, LogOut, RefreshCw } from "lucide-react";
import { useRouter } from "next/navigation";
import { useEffect } from "react";
import { authClient } from "@/lib/auth/client";
import { buttonGhost, buttonPrimary } from "../ui/styles";

/** The page reloads itself this often, and lets the account in once it is approved. */
const RECHECK_MS = 10_000;

/** What a waiting (or disabled) account sees instead of the chats. */
export function WaitingApproval({ email, disabled }: { email: string; disabled: boolean }) {
  const router = useRouter();

  useEffect(() => {
    if (disabled) return;
    const timer = setInterval(() => router.refresh(), RECHECK_MS);
    return () => clearInterval(timer);
  }, [disabled, router]);

  async function signOut() {
    await authClient.signOut();
    router.replace("/login");
    router.refresh();
  }

  return (
    <main className="flex min-h-full items-center justify-center bg-panel px-4">
      <div className="w-full max-w-md space-y-4 rounded-2xl border border-line bg-white p-8 shadow-sm">
        <Hourglass className="text-amber-500" size={28} />
        <div className="space-y-1">
          <p className="text-xs font-semibold uppercase tracking-widest text-accent">Fold</p>
          <h1 className="text-xl font-semibold">
            {disabled ? "This account is disabled" : "Waiting for approval"}
          </h1>
          <p className="text-sm text-muted">
            {disabled
              ? `The account ${email} cannot use Fold any more. Ask the server's admin if that is a mistake.`
              : `Your account ${email} is created. An admin of this server has to approve it before you can chat; this page checks again every few seconds.`}
          </p>
        </div>
        <div className="flex gap-2">
          {disabled ? null : (
            <button type="button" onClick={() => router.refresh()} className={buttonPrimary}>
              <RefreshCw size={16} />
              Check again
            </button>
          )}
          <button type="button" onClick={signOut} className={buttonGhost}>
            <LogOut size={16} />
            Sign out
          </button>
        </div>
      </div>
    </main>
  );
}
