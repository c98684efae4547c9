"use client";

import { DatabaseZap } from "lucide-react";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef } from "react";
import { useDatabaseOutage } from "./use-database-outage";

/** On every page: says so while Fold's database is unreachable, and refreshes when it is back. */
export function OutageBanner() {
  const router = useRouter();
  const { down } = useDatabaseOutage({
    onRecovered: useCallback(() => router.refresh(), [router]),
  });
  const banner = useRef<HTMLDivElement>(null);
  // The page moves down by the banner's height, so it covers nothing. Padding moves what flows;
  // what is fixed to the top (on a phone, the button that opens the chat list) moves by
  // --outage-offset. Its height changes as its line wraps.
  useEffect(() => {
    const element = banner.current;
    if (!down || !element) return;
    const root = document.documentElement;
    const make = () => {
      document.body.style.paddingTop = `${element.offsetHeight}px`;
      root.style.setProperty("--outage-offset", `${element.offsetHeight}px`);
    };
    make();
    const observer = new ResizeObserver(make);
    observer.observe(element);
    return () => {
      observer.disconnect();
      document.body.style.paddingTop = "";
      root.style.removeProperty("--outage-offset");
    };
  }, [down]);
  if (!down) return null;
  return (
    <div
      ref={banner}
      role="alert"
      className="fixed inset-x-0 top-0 z-50 flex items-center justify-center gap-2 bg-amber-100 px-4 py-2 text-sm text-amber-900"
    >
      <DatabaseZap size={16} aria-hidden />
      Fold can't reach its database right now. Retrying…
    </div>
  );
}
