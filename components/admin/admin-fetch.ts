/** JSON calls to the admin API, answering the server's own message when one fails. */
import { signInIfSessionEnded } from "../outage/api-fetch";

export const OFFLINE_MESSAGE = "Could not reach Fold. Check your connection and try again.";

const UNREADABLE_MESSAGE = "Fold's answer could not be read. Try again in a moment.";

export type Result<T> =
  | { ok: true; value: T }
  /** `status`: the server's answer (none when it could not be reached). */
  | { ok: false; message: string; status?: number };

export async function adminCall<T>(
  url: string,
  init: { method?: string; body?: unknown; signal?: AbortSignal } = {},
): Promise<Result<T>> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: init.method ?? "GET",
      cache: "no-store",
      signal: init.signal,
      // Every write says JSON, a body or none: the server refuses any other state change (a
      // cross-site form cannot send this header without asking first).
      headers:
        (init.method ?? "GET") === "GET" ? undefined : { "content-type": "application/json" },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  } catch (error) {
    if (init.signal?.aborted) throw error;
    return { ok: false, message: OFFLINE_MESSAGE };
  }
  if (!response.ok) {
    await signInIfSessionEnded(response);
    return { ok: false, message: await serverMessage(response), status: response.status };
  }
  if (response.status === 204) return { ok: true, value: undefined as T };
  try {
    return { ok: true, value: (await response.json()) as T };
  } catch (error) {
    if (init.signal?.aborted) throw error;
    // Not Fold's answer (a proxy's page), or cut off on the way: a failure the page can show.
    return { ok: false, message: UNREADABLE_MESSAGE, status: response.status };
  }
}

/** `{ error: { message } }`, or the status when there is none. */
async function serverMessage(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { error?: { message?: string } };
    if (body.error?.message) return body.error.message;
  } catch {
    // Not JSON: fall through to the status.
  }
  return `The server answered ${response.status}.`;
}
