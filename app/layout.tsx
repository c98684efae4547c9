import type { Metadata, Viewport } from "next";
import { headers } from "next/headers";
import { connection } from "next/server";
import type { ReactNode } from "react";
import { HydrationMarker } from "@/components/hydration-marker";
import { OutageBanner } from "@/components/outage/outage-banner";
import { Providers } from "@/components/ui/theme";
import { NONCE_HEADER } from "@/lib/http/security-headers";
import "./globals.css";

export const viewport: Viewport = {
  width: "device-width",
  initialScale: 1,
  themeColor: [
    { media: "(prefers-color-scheme: light)", color: "#ffffff" },
    { media: "(prefers-color-scheme: dark)", color: "#0b0b0e" },
  ],
};

// No title here: each page names itself (metadata), and the chat pages through their layout,
// which stays mounted as the user moves between chats, so the tab never goes blank.
export const metadata: Metadata = {
  description: "Chat with any model, without hitting the context wall.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page renders per request, so Next can put this request's CSP nonce (proxy.ts) on
  // its scripts; a page prerendered at build time would carry none and not hydrate.
  await connection();
  const nonce = (await headers()).get(NONCE_HEADER) ?? undefined;
  return (
    // next-themes sets the theme class on <html> before React hydrates.
    <html lang="en" suppressHydrationWarning>
      <body>
        <Providers nonce={nonce}>
          <HydrationMarker />
          <OutageBanner />
          {children}
        </Providers>
      </body>
    </html>
  );
}
