import { MessagesSquare } from "lucide-react";
import Link from "next/link";
import type { ReactNode } from "react";
import { buttonGhost, buttonPrimary } from "../ui/styles";

/** A page that says what went wrong in a sentence and offers the ways on (404, 403). */
export function StatusPage(props: { code: number; title: string; children: ReactNode }) {
  return (
    <main id="main" className="flex min-h-full items-center justify-center bg-panel px-4 py-12">
      <div className="w-full max-w-md space-y-4 rounded-2xl border border-line bg-white p-8 text-center shadow-sm">
        <MessagesSquare className="mx-auto text-zinc-300" size={36} aria-hidden="true" />
        <p className="text-xs font-semibold tracking-widest text-accent uppercase">
          Fold · {props.code}
        </p>
        <h1 className="text-xl font-semibold">{props.title}</h1>
        <div className="text-sm text-muted">{props.children}</div>
        <nav aria-label="Where to go" className="flex flex-wrap justify-center gap-2 pt-2">
          <Link href="/" className={buttonPrimary}>
            Back to your chats
          </Link>
          <Link href="/login" className={buttonGhost}>
            Sign in with another account
          </Link>
        </nav>
      </div>
    </main>
  );
}
