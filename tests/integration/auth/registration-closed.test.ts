import { expect, it, vi } from "vitest";

vi.hoisted(() => {
  process.env.REGISTRATION = "closed";
});

import { registrationHooks } from "@/lib/auth/registration";
import { countUsers } from "@/lib/db/queries/users";
import { user } from "@/lib/db/schema";
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

  it("answers a sign-up with an address that has an account as it answers any other: nothing tells a stranger which addresses have one", async () => {
    const database = use();
    const known = await register(database, "ADA@example.com");
    const unknown = await register(database, "nobody@example.com");
    const answer = async ({ response }: typeof known) => ({
      status: response.status,
      body: await response.json(),
    });
    const toUnknown = await answer(unknown);
    expect(toUnknown.status).toBe(403);
    expect(await answer(known)).toEqual(toUnknown);
  });
});

describeEachDriver("registration: closed, two first sign-ups at once", (use) => {
  it("lets one in as the admin and takes the other back, though both counted no account", async () => {
    const database = use();
    const hooks = registrationHooks(database.db).user.create;
    const ids = [crypto.randomUUID(), crypto.randomUUID()];
    // Both sign-ups pass the check before either is stored, as two requests at once can.
    const checked = await Promise.all(
      ["ada-at-once@example.com", "bob-at-once@example.com"].map((email, i) =>
        hooks.before({ id: ids[i], name: "x", email }),
      ),
    );
    for (const { data } of checked) {
      await database.db.insert(user).values(data as typeof user.$inferInsert);
    }
    await hooks.after({ id: ids[0] as string });
    await expect(hooks.after({ id: ids[1] as string })).rejects.toMatchObject({
      body: { code: "REGISTRATION_CLOSED" },
    });
    const left = await database.db.select().from(user);
    expect(left.map((u) => [u.email, u.role, u.status])).toEqual([
      ["ada-at-once@example.com", "admin", "active"],
    ]);
  });
});
