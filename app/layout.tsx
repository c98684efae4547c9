import type { Metadata } from "next";
import { connection } from "next/server";
import type { ReactNode } from "react";
import { Toaster } from "sonner";
import { HydrationMarker } from "@/components/hydration-marker";
import { OutageBanner } from "@/components/outage/outage-banner";
import "./globals.css";

export const metadata: Metadata = {
  title: "Fold",
  description: "Chat with any model, without hitting the context wall.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page renders per request, so Next can put this request's CSP nonce (proxy.ts) on
  // its scripts; a page prerendered at build time would carry none and not hydrate.
  await connection();
  return (
    <html lang="en">
      <body>
        <HydrationMarker />
        <OutageBanner />
        {children}
        <Toaster />
      </body>
    </html>
  );
}
