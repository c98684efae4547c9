"use client";

import { useEffect, useRef, useState } from "react";
import { OUTAGE_EVENT, RECOVERED_EVENT } from "./api-fetch";

/** Used when a 503 carries no Retry-After; the server sends 5 s (lib/errors.ts). */
const DEFAULT_RETRY_S = 5;
export const HEALTH_URL = "/api/health";

/** Whether the database answers: false on a 503; an unreachable server is not a database outage. */
async function databaseAnswers(): Promise<{ ok: boolean; retryS: number }> {
  try {
    const response = await fetch(HEALTH_URL, { cache: "no-store" });
    const retryS = Number(response.headers.get("retry-after")) || DEFAULT_RETRY_S;
    return { ok: response.status !== 503, retryS };
  } catch {
    return { ok: true, retryS: DEFAULT_RETRY_S };
  }
}

/**
 * A 503 whose first probe already finds the database answering (a blip) reloads what failed,
 * but not more often than this: a request that keeps failing while the health check passes
 * must not reload in a loop.
 */
const BLIP_RECOVERY_GAP_MS = DEFAULT_RETRY_S * 1000;
let lastBlipRecovery = 0;
function blipRecoveryAllowed(): boolean {
  const now = Date.now();
  if (now - lastBlipRecovery < BLIP_RECOVERY_GAP_MS) return false;
  lastBlipRecovery = now;
  return true;
}

/**
 * Whether Fold's database is down, as far as this page knows: set by a 503 from any API call
 * (or at once with `checkNow`), then retried against /api/health until it answers; on the
 * way back up `onRecovered` runs (refresh what failed).
 */
export function useDatabaseOutage(options: { checkNow?: boolean; onRecovered?: () => void } = {}) {
  const { checkNow = false, onRecovered } = options;
  const [down, setDown] = useState(false);
  const [checking, setChecking] = useState(checkNow);

  // Set by a 503 this page got (not by `checkNow`): something failed, so even a first probe
  // that finds the database back (a blip) has loads to redo.
  const failedHere = useRef(false);
  useEffect(() => {
    const mark = () => {
      failedHere.current = true;
      setChecking(true);
    };
    window.addEventListener(OUTAGE_EVENT, mark);
    return () => window.removeEventListener(OUTAGE_EVENT, mark);
  }, []);

  useEffect(() => {
    if (!checking) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let cancelled = false;
    const probe = async (wasDown: boolean) => {
      const { ok, retryS } = await databaseAnswers();
      if (cancelled) return;
      if (ok) {
        setDown(false);
        setChecking(false);
        const failed = failedHere.current;
        failedHere.current = false;
        if (wasDown || (failed && blipRecoveryAllowed())) {
          window.dispatchEvent(new Event(RECOVERED_EVENT));
          onRecovered?.();
        }
        return;
      }
      setDown(true);
      timer = setTimeout(() => void probe(true), retryS * 1000);
    };
    void probe(false);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [checking, onRecovered]);

  return { down, checking };
}

/** A number that changes each time the database comes back: put it in a fetching effect's deps. */
export function useRecoveryKey(): number {
  const [key, setKey] = useState(0);
  useEffect(() => {
    const bump = () => setKey((k) => k + 1);
    window.addEventListener(RECOVERED_EVENT, bump);
    return () => window.removeEventListener(RECOVERED_EVENT, bump);
  }, []);
  return key;
}
