import { expect, it, vi } from "vitest";

vi.hoisted(() => {
  // No scheme: `localhost:3000` parses as a URL of scheme "localhost", which no browser sends.
  process.env.BETTER_AUTH_URL = "localhost:3000";
});

import { env } from "@/lib/env";
import { register, sessionOf } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";

describeEachDriver("a BETTER_AUTH_URL that is not an http(s) URL", (use) => {
  it("is set aside as any bad setting is: accounts still sign up and keep their session", async () => {
    const database = use();
    expect(env().authUrl).toBeUndefined();
    const { response, browser } = await register(database, "no-scheme@example.com");
    expect(response.status).toBe(200);
    expect((await sessionOf(database, browser))?.user.email).toBe("no-scheme@example.com");
  });
});
