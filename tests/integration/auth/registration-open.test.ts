import { expect, it, vi } from "vitest";

vi.hoisted(() => {
  process.env.REGISTRATION = "open";
});

import * as chatsRoute from "@/app/api/chats/route";
import { register, sessionOf } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { call } from "../../helpers/http";

describeEachDriver("registration: open", (use) => {
  it("lets every new account chat at once; only the first is admin", async () => {
    const database = use();
    const ada = await register(database, "ada@example.com");
    const bob = await register(database, "bob@example.com");
    expect((await sessionOf(database, ada.browser))?.user).toMatchObject({
      role: "admin",
      status: "active",
    });
    expect((await sessionOf(database, bob.browser))?.user).toMatchObject({
      role: "user",
      status: "active",
    });
    const chats = await call(database, chatsRoute.GET, {
      path: "/api/chats",
      browser: bob.browser,
    });
    expect(chats.status).toBe(200);
  });
});
