import type { Metadata } from "next";
import type { ReactNode } from "react";
import { HydrationMarker } from "@/components/hydration-marker";
import "./globals.css";

export const metadata: Metadata = {
  title: "Fold",
  description: "Chat with any model, without hitting the context wall.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <HydrationMarker />
        {children}
      </body>
    </html>
  );
}
