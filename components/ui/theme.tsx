"use client";

import { Monitor, Moon, Sun } from "lucide-react";
import { ThemeProvider, useTheme } from "next-themes";
import { type ReactNode, useEffect, useState } from "react";
import { Toaster } from "sonner";

/**
 * Light or dark from the system unless the user picks one (kept in localStorage by
 * next-themes). Its pre-paint script carries this request's CSP nonce.
 */
export function Providers({ nonce, children }: { nonce?: string; children: ReactNode }) {
  return (
    <ThemeProvider attribute="class" defaultTheme="system" enableSystem nonce={nonce}>
      {children}
      <ThemedToaster />
    </ThemeProvider>
  );
}

/** Where toasts start: below the chat page's header (h-14) with a little room. */
const TOAST_TOP_PX = 64;

function ThemedToaster() {
  const { resolvedTheme } = useTheme();
  return (
    <Toaster
      theme={resolvedTheme === "dark" ? "dark" : "light"}
      // At the top: at the bottom a toast would cover the composer and the ring it answers.
      // Below the chat's header (56 px), which it covered: the menu, the title and Export.
      position="top-center"
      offset={{ top: TOAST_TOP_PX }}
      mobileOffset={{ top: TOAST_TOP_PX }}
      closeButton
    />
  );
}

const NEXT_THEME = { system: "light", light: "dark", dark: "system" } as const;
const LABEL = { system: "Theme: system", light: "Theme: light", dark: "Theme: dark" } as const;

/** Cycles system → light → dark; the icon says which is in force. */
export function ThemeToggle({ className }: { className?: string }) {
  const { theme, setTheme } = useTheme();
  // The stored choice is only known in the browser: render a neutral icon until then.
  const [mounted, setMounted] = useState(false);
  useEffect(() => setMounted(true), []);
  const current = mounted && (theme === "light" || theme === "dark") ? theme : "system";
  const Icon = current === "light" ? Sun : current === "dark" ? Moon : Monitor;
  return (
    <button
      type="button"
      onClick={() => setTheme(NEXT_THEME[current])}
      aria-label={LABEL[current]}
      title={`${LABEL[current]} (click to change)`}
      className={className}
    >
      <Icon size={16} />
    </button>
  );
}
