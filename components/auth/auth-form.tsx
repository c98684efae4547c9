"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { authClient } from "@/lib/auth/client";
import { signInHref } from "@/lib/auth/return-path";
import { buttonPrimary, inputBase } from "../ui/styles";
import { isHoverless } from "../ui/use-hoverless";

type Mode = "login" | "register";

const COPY: Record<
  Mode,
  {
    title: string;
    action: string;
    busy: string;
    switchText: string;
    switchHref: string;
    switchLink: string;
  }
> = {
  login: {
    title: "Sign in to Fold",
    action: "Sign in",
    busy: "Signing in…",
    switchText: "No account yet?",
    switchHref: "/register",
    switchLink: "Create one",
  },
  register: {
    title: "Create your Fold account",
    action: "Create account",
    busy: "Creating account…",
    switchText: "Already have an account?",
    switchHref: "/login",
    switchLink: "Sign in",
  },
};

type Props = {
  mode: Mode;
  /** No account exists yet: the next one registered becomes the admin (lib/auth/registration). */
  firstUser?: boolean;
  /** A line about the account being created (it waits for approval, registration is closed). */
  notice?: string;
  /** Why the visitor was sent here (an admin disabled the account), said above the form. */
  warning?: string;
  /** Registration is closed: the fields are not offered at all. */
  closed?: boolean;
  /** The page asked for before signing in (lib/auth/return-path): the form goes there after. */
  next?: string | null;
};

export function AuthForm({ mode, firstUser, notice, warning, closed, next = null }: Props) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submitting = useRef(false);
  // Typing goes to the form's first field, as the page is there for it; not on a touch screen,
  // where the keyboard would cover the page before it is read.
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (document.activeElement === document.body && !isHoverless()) first.current?.focus();
  }, []);
  const copy = COPY[mode];

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    // The button stays focusable while a request is on its way (a disabled one would drop the
    // focus to the page when it is refused), so a second press is ignored here instead.
    if (submitting.current) return;
    submitting.current = true;
    const form = new FormData(event.currentTarget);
    const email = String(form.get("email") ?? "").trim();
    const password = String(form.get("password") ?? "");
    setBusy(true);
    setError(null);
    try {
      const result =
        mode === "register"
          ? await authClient.signUp.email({
              email,
              password,
              name: String(form.get("name") ?? "").trim() || email.split("@")[0] || email,
            })
          : await authClient.signIn.email({ email, password });
      if (result.error) {
        setError(authErrorText(result.error));
        setBusy(false);
        submitting.current = false;
        return;
      }
    } catch {
      // The request never got an answer (offline, the server restarting).
      setError("Fold could not be reached. Check your connection and try again.");
      setBusy(false);
      submitting.current = false;
      return;
    }
    router.replace(next ?? "/");
    router.refresh();
  }

  return (
    <main className="flex min-h-full items-center justify-center bg-panel px-4">
      <form
        // Sent by the browser itself before the script runs, a GET would put the password in
        // the address (the history, the server's logs, the next page's Referer): a POST brings
        // the page back with nothing in it.
        method="post"
        onSubmit={onSubmit}
        className="w-full max-w-sm space-y-4 rounded-2xl border border-line bg-white p-8 shadow-sm"
      >
        <div className="space-y-1">
          <p className="text-xs font-semibold uppercase tracking-widest text-accent">Fold</p>
          <h1 className="text-xl font-semibold">{copy.title}</h1>
          {firstUser && mode === "register" ? (
            <p className="text-sm text-muted">
              You are the first user: this account will be the admin.
            </p>
          ) : null}
          {firstUser && mode === "login" ? (
            <p
              className="rounded-lg bg-indigo-50 px-3 py-2 text-sm text-indigo-900"
              data-testid="first-run-hint"
            >
              Nobody has an account on this server yet.{" "}
              <Link href="/register" className="font-medium underline underline-offset-2">
                Create the first account
              </Link>{" "}
              — it becomes the admin of this server.
            </p>
          ) : null}
          {notice ? <p className="text-sm text-muted">{notice}</p> : null}
          {warning ? (
            <p
              className="rounded-lg bg-amber-50 px-3 py-2 text-sm text-amber-900"
              data-testid="sign-in-warning"
            >
              {warning}
            </p>
          ) : null}
        </div>
        {closed ? null : (
          <>
            {mode === "register" ? (
              <label className="block space-y-1 text-sm">
                <span className="font-medium">Name</span>
                <input
                  ref={first}
                  name="name"
                  autoComplete="name"
                  className={inputBase}
                  maxLength={100}
                />
              </label>
            ) : null}
            <label className="block space-y-1 text-sm">
              <span className="font-medium">Email</span>
              <input
                ref={mode === "register" ? undefined : first}
                name="email"
                type="email"
                required
                // An address longer than mail allows cannot register (the server says so too).
                maxLength={mode === "register" ? 254 : undefined}
                autoComplete="email"
                className={inputBase}
              />
            </label>
            <label className="block space-y-1 text-sm">
              <span className="font-medium">Password</span>
              <input
                name="password"
                type="password"
                required
                minLength={8}
                maxLength={128}
                autoComplete={mode === "register" ? "new-password" : "current-password"}
                className={inputBase}
              />
            </label>
            {error ? (
              <p role="alert" className="rounded-lg bg-red-50 px-3 py-2 text-sm text-red-700">
                {error}
              </p>
            ) : null}
            <button type="submit" aria-disabled={busy} className={`${buttonPrimary} w-full`}>
              {busy ? copy.busy : copy.action}
            </button>
          </>
        )}
        <p className="text-center text-sm text-muted">
          {copy.switchText}{" "}
          <Link
            href={signInHref(next, copy.switchHref)}
            className="font-medium text-ink underline-offset-2 hover:underline"
          >
            {copy.switchLink}
          </Link>
        </p>
      </form>
    </main>
  );
}

/**
 * better-auth's own errors carry `message`; Fold's in front of it (an outage, a body too large,
 * a rate limit) nest it as `error.message`.
 */
function authErrorText(error: { message?: string; error?: unknown }): string {
  if (error.message) return error.message;
  const nested = error.error as { message?: unknown } | undefined;
  return typeof nested?.message === "string" ? nested.message : "That did not work. Try again.";
}
