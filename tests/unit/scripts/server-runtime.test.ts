import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain .mjs script shared with `npm start` and the e2e runner
import { nextStartArgs, serverNodeOptions } from "../../../scripts/server-runtime.mjs";

const run = serverNodeOptions as (current?: string) => string;

describe("how Node runs Fold's server", () => {
  it("gives the young generation room for a turn's short-lived objects", () => {
    expect(run("").split(" ")).toContain("--max-semi-space-size=32");
  });

  it("keeps a semi-space size, and every other option, given in NODE_OPTIONS", () => {
    const options = run("--max-semi-space-size=8 --max-old-space-size=4096").split(" ");
    expect(options).toContain("--max-semi-space-size=8");
    expect(options).toContain("--max-old-space-size=4096");
    expect(options.filter((o) => o.startsWith("--max-semi-space-size"))).toHaveLength(1);
    // V8's own spelling, with underscores, is the user's size too.
    expect(run("--max_semi_space_size=8")).not.toContain("=32");
  });

  it("keeps request-scoped state on V8's context frames where this Node needs the flag", () => {
    const options = run("").split(" ");
    if (process.allowedNodeEnvironmentFlags.has("--experimental-async-context-frame")) {
      expect(options).toContain("--experimental-async-context-frame");
    }
    expect(run("--experimental-async-context-frame").match(/async-context-frame/g)).toHaveLength(1);
  });

  it("keeps idle connections open longer than a client's keep-alive pool keeps them", () => {
    const args = (nextStartArgs as (port: number, host?: string) => string[])(3000, "127.0.0.1");
    const timeout = Number(args[args.indexOf("--keepAliveTimeout") + 1]);
    // Longer than Node's own 5 s and than a 60 s proxy pool (nginx, cloud load balancers).
    expect(timeout).toBeGreaterThan(60_000);
    expect(args.slice(0, 3)).toEqual(["start", "-p", "3000"]);
    expect(args.slice(-2)).toEqual(["-H", "127.0.0.1"]);
  });
});
