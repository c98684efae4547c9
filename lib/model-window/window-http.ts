import type { z } from "zod";
import type { FetchFunction } from "@/lib/ai/remote-models";

/**
 * One JSON request to a server's own API while resolving a window. A server that does not
 * have the endpoint (404 or another refusal, or an `error` body: LM Studio answers an unknown
 * path with 200 and one), or answers something else than the schema, says nothing: null. One
 * that is busy or failing (5xx: llama.cpp loading its model, a proxy's 502; 408, 429) has not
 * answered, and throws like a network error or the caller's abort: what stands in for its
 * answer is kept only briefly, not for an hour as if it had said it does not know.
 */
export async function requestJson<T>(
  fetch: FetchFunction,
  url: string,
  input: { apiKey?: string; body?: unknown; signal: AbortSignal; schema: z.ZodType<T> },
): Promise<T | null> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (input.body !== undefined) headers["content-type"] = "application/json";
  if (input.apiKey) headers.authorization = `Bearer ${input.apiKey}`;
  const response = await fetch(url, {
    method: input.body === undefined ? "GET" : "POST",
    headers,
    body: input.body === undefined ? undefined : JSON.stringify(input.body),
    signal: input.signal,
  });
  if (!response.ok) {
    await response.body?.cancel();
    if (notAnswering(response.status)) throw new Error(`${url} answered ${response.status}`);
    return null;
  }
  const body: unknown = await response.json().catch(() => null);
  if (typeof body === "object" && body !== null && "error" in body) return null;
  const parsed = input.schema.safeParse(body);
  return parsed.success ? parsed.data : null;
}

/** A status that says the server is busy or failing now, not that it lacks the endpoint. */
const notAnswering = (status: number) =>
  (status >= 500 && status !== 501) || status === 408 || status === 429;
