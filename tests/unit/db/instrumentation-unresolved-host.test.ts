import { lookup } from "node:dns/promises";
import { afterEach, expect, it, vi } from "vitest";
import { databaseUnavailable } from "@/lib/errors";

// Server start (instrumentation.ts) with a DATABASE_URL whose host name does not resolve.
vi.mock("@/lib/env", () => ({ env: () => ({ databaseUrlInvalid: false }) }));
vi.mock("@/lib/limits/peer-address", () => ({ installPeerAddressStamp: () => undefined }));
const client = vi.hoisted(() => ({ getDatabase: vi.fn() }));
vi.mock("@/lib/db/client", () => client);
const log = vi.hoisted(() => ({ info: vi.fn(), warn: vi.fn(), error: vi.fn() }));
vi.mock("@/lib/log", () => ({ log }));

const { register } = await import("@/instrumentation");
const runtime = process.env.NEXT_RUNTIME;
afterEach(() => {
  process.env.NEXT_RUNTIME = runtime;
});

it("says at start that DATABASE_URL's host does not resolve (a typo), not only that the database is down", async () => {
  process.env.NEXT_RUNTIME = "nodejs";
  // What the driver gets for a host no DNS knows (.invalid never resolves).
  const notFound = await lookup("db-typo.invalid").then(
    () => null,
    (error: unknown) => error,
  );
  client.getDatabase.mockRejectedValueOnce(databaseUnavailable(notFound));
  await expect(register()).resolves.toBeUndefined();
  expect(log.error).toHaveBeenLastCalledWith(
    expect.anything(),
    expect.stringMatching(/^database host "db-typo\.invalid" does not resolve/),
  );

  // A server that is there but not answering yet: the general message.
  const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), {
    code: "ECONNREFUSED",
  });
  client.getDatabase.mockRejectedValueOnce(databaseUnavailable(refused));
  await expect(register()).resolves.toBeUndefined();
  expect(log.error).toHaveBeenLastCalledWith(
    expect.anything(),
    expect.stringMatching(/^database unreachable at start/),
  );
});
