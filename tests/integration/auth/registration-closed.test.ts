import { expect, it, vi } from "vitest";

vi.hoisted(() => {
  process.env.REGISTRATION = "closed";
});

import { countUsers } from "@/lib/db/queries/users";
import { register, sessionOf } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";

describeEachDriver("registration: closed", (use) => {
  it("still lets the first account in, as the admin", async () => {
    const database = use();
    const ada = await register(database, "ada@example.com");
    expect(ada.response.status).toBe(200);
    expect((await sessionOf(database, ada.browser))?.user).toMatchObject({
      role: "admin",
      status: "active",
    });
  });

  it("refuses every later sign-up with 403 and stores nothing", async () => {
    const database = use();
    const bob = await register(database, "bob@example.com");
    expect(bob.response.status).toBe(403);
    expect(await bob.response.json()).toMatchObject({
      code: "REGISTRATION_CLOSED",
      message: expect.stringContaining("Registration is closed"),
    });
    expect(await sessionOf(database, bob.browser)).toBeNull();
    expect(await countUsers(database.db)).toBe(1);
  });
});
