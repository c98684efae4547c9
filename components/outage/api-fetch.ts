/** Fired when Fold's API answers 503: its database is unreachable (lib/errors.ts). */
export const OUTAGE_EVENT = "fold:database-unavailable";
/** Fired when it answers again: hooks that failed during the outage load again. */
export const RECOVERED_EVENT = "fold:database-recovered";

/** `fetch` for Fold's own API: a 503 also tells the outage banner to show and start retrying. */
export async function apiFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  if (response.status === 503) window.dispatchEvent(new Event(OUTAGE_EVENT));
  return response;
}
