import { HEALTH_URL } from "./use-database-outage";

/**
 * Refreshes the page's server-rendered parts only once Fold answers its health check. Next meets
 * a refresh that fails (no connection, a proxy's error page while Fold restarts) by loading the
 * whole page anew, and a browser that cannot reach Fold then shows its own error page in place
 * of the app, and whatever was on it is gone.
 */
export async function refreshIfReachable(refresh: () => void): Promise<void> {
  try {
    const response = await fetch(HEALTH_URL, { cache: "no-store" });
    if (response.ok) refresh();
  } catch {
    // Unreachable: the outage banner, or the next answered request, refreshes later.
  }
}
