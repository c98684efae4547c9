import type { LookupAddress } from "node:dns";
import { expect } from "vitest";
import { FetchUrlError, type FetchUrlErrorReason, type Lookup } from "@/lib/ai/tools/fetch-url";

// Test doubles for fetch_url: a DNS table and a fetch that records what it was asked for.

/** DNS answers from a table; an unknown name fails like a real NXDOMAIN. */
export function fakeLookup(table: Record<string, string[]>): Lookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(lookup, { calls });
}

/** A fetch double that records the URLs it was asked for and answers with `respond`. */
export function recordingFetch(
  respond: (url: string) => Response = () => new Response("unexpected"),
) {
  const calls: string[] = [];
  const fetch = async (input: string | URL | Request) => {
    const url = input instanceof Request ? input.url : String(input);
    calls.push(url);
    return respond(url);
  };
  return Object.assign(fetch as typeof globalThis.fetch, { calls });
}

async function failure(promise: Promise<unknown>): Promise<FetchUrlError> {
  const error = await promise.then(
    () => new Error("expected the fetch to fail"),
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(FetchUrlError);
  return error as FetchUrlError;
}

export async function expectFailure(
  promise: Promise<unknown>,
  reason: FetchUrlErrorReason,
  message: RegExp,
) {
  const error = await failure(promise);
  expect(error.reason).toBe(reason);
  expect(error.message).toMatch(message);
  return error;
}
