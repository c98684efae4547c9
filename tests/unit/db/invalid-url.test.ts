import { expect, it, vi } from "vitest";
import { AppError } from "@/lib/errors";

// DATABASE_URL set, but not a URL: what loadEnv makes of it (tests/unit/env.test.ts).
vi.mock("@/lib/env", () => ({
  env: () => ({ databaseUrl: undefined, databaseUrlInvalid: true, pgliteDir: "memory://" }),
}));
const pglite = vi.hoisted(() => ({ create: vi.fn() }));
vi.mock("@electric-sql/pglite", () => ({ PGlite: pglite }));
const logs = vi.hoisted(() => ({ info: vi.fn(), warn: vi.fn(), error: vi.fn() }));
vi.mock("@/lib/log", () => ({ log: logs }));

const { getDatabase } = await import("@/lib/db/client");

it("opens no database when DATABASE_URL is set but invalid: never an empty embedded one", async () => {
  for (let attempt = 0; attempt < 2; attempt++) {
    const error = await getDatabase().then(
      () => null,
      (thrown: unknown) => thrown,
    );
    // Requests get the database's 503, not a 500 and not a fresh database.
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(503);
  }
  expect(pglite.create).not.toHaveBeenCalled();
  // Said once, with what to do about it, whatever the number of requests.
  expect(logs.error).toHaveBeenCalledTimes(1);
  expect(String(logs.error.mock.calls[0]?.[0]?.err?.message)).toMatch(/percent-encode/);
});
