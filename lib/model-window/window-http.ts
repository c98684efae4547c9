import type { z } from "zod";
import type { FetchFunction } from "@/lib/ai/remote-models";

/**
 * One JSON request to a server's own API while resolving a window. A server that does not
 * have the endpoint (404, or any other failure status, or an `error` body: LM Studio answers
 * an unknown path with 200 and one), or answers something else than the schema, says nothing:
 * null. Network errors and the caller's abort still throw.
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
    return null;
  }
  const body: unknown = await response.json().catch(() => null);
  if (typeof body === "object" && body !== null && "error" in body) return null;
  const parsed = input.schema.safeParse(body);
  return parsed.success ? parsed.data : null;
}
