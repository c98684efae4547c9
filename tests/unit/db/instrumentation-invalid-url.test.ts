import { afterEach, expect, it, vi } from "vitest";
import { databaseUnavailable } from "@/lib/errors";

// Server start (instrumentation.ts) with a DATABASE_URL that is set but no URL.
const config = vi.hoisted(() => ({ databaseUrlInvalid: true }));
vi.mock("@/lib/env", () => ({ env: () => config }));
vi.mock("@/lib/limits/peer-address", () => ({ installPeerAddressStamp: () => undefined }));
const client = vi.hoisted(() => ({ getDatabase: vi.fn() }));
vi.mock("@/lib/db/client", () => client);
vi.mock("@/lib/log", () => ({ log: { info: vi.fn(), warn: vi.fn(), error: vi.fn() } }));

const { register } = await import("@/instrumentation");
const runtime = process.env.NEXT_RUNTIME;
afterEach(() => {
  process.env.NEXT_RUNTIME = runtime;
});

it("starts the server with no database when DATABASE_URL is no URL, so requests can answer 503", async () => {
  process.env.NEXT_RUNTIME = "nodejs";
  client.getDatabase.mockRejectedValue(databaseUnavailable(new Error("not a URL")));
  // Next keeps a failed start for every request after it: it must not fail.
  await expect(register()).resolves.toBeUndefined();

  // Any other failure to open the database still fails the start loudly.
  config.databaseUrlInvalid = false;
  client.getDatabase.mockRejectedValue(new Error("connect ECONNREFUSED"));
  await expect(register()).rejects.toThrow("ECONNREFUSED");
});
