import { DrizzleQueryError } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
const query = (cause: unknown) => new DrizzleQueryError("select 1", [], cause as Error);

describe("isDatabaseUnavailable", () => {
  it.each([
    ["a refused connection under a query", query(withCode("connect ECONNREFUSED", "ECONNREFUSED"))],
    ["a reset connection under a query", query(withCode("read ECONNRESET", "ECONNRESET"))],
    [
      "both addresses refused (AggregateError) under a query",
      query(new AggregateError([withCode("a", "ECONNREFUSED"), withCode("b", "ECONNREFUSED")])),
    ],
    ["a closed PGlite", new Error("PGlite is closed")],
    ["pg's dropped connection", new Error("Connection terminated unexpectedly")],
    ["pg-pool's connect timeout", new Error("timeout exceeded when trying to connect")],
    ["a server shutting down (57P01)", withCode("terminating connection", "57P01")],
    ["a server starting up (57P03)", withCode("the database system is starting up", "57P03")],
    ["too many connections (53300)", withCode("sorry, too many clients", "53300")],
    [
      "better-auth's APIError around all of it",
      new Error("Failed to get session", {
        cause: query(withCode("connect ECONNREFUSED", "ECONNREFUSED")),
      }),
    ],
  ])("recognizes %s", (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    [
      "a provider that refuses the connection",
      new TypeError("fetch failed", { cause: withCode("x", "ECONNREFUSED") }),
    ],
    ["a bad query", query(withCode('syntax error at or near "selec"', "42601"))],
    ["a NUL byte Postgres refuses", query(withCode("invalid byte sequence", "22021"))],
    ["a plain bug", new TypeError("cannot read properties of undefined")],
    ["not an error at all", "ECONNREFUSED"],
  ])("does not mistake %s for an outage", (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it("stops on a cause chain that loops", () => {
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(isDatabaseUnavailable(a)).toBe(false);
  });
});
