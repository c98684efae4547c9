import { eq } from "drizzle-orm";
import { expect, it, vi } from "vitest";

vi.hoisted(() => {
  process.env.REGISTRATION = "open";
});

import * as authRoute from "@/app/api/auth/[...all]/route";
import * as chatsRoute from "@/app/api/chats/route";
import { user } from "@/lib/db/schema";
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

  it("a sign-up's picture is not stored: Fold shows none and cannot check one", async () => {
    const database = use();
    const response = await call(database, authRoute.POST, {
      path: "/api/auth/sign-up/email",
      method: "POST",
      params: { all: ["sign-up", "email"] },
      body: {
        name: "dave",
        email: "dave@example.com",
        password: "a password long enough",
        image: `javascript:alert(1)${"A".repeat(10_000)}`,
      },
    });
    expect(response.status).toBe(200);
    const [row] = await database.db
      .select({ image: user.image })
      .from(user)
      .where(eq(user.email, "dave@example.com"));
    expect(row).toEqual({ image: null });
  });

  it("an account cannot rewrite its name or picture behind Fold's back (no such endpoint)", async () => {
    const database = use();
    const { browser } = await register(database, "carol@example.com");
    // Text Postgres cannot store is refused before any route reads it (400); the rest finds no
    // such route (404).
    for (const [body, status] of [
      [{ name: null }, 404],
      [{ name: "a\u0000b" }, 400],
      [{ name: "x".repeat(10_000) }, 404],
    ] as const) {
      const response = await call(database, authRoute.POST, {
        path: "/api/auth/update-user",
        method: "POST",
        params: { all: ["update-user"] },
        body,
        browser,
      });
      expect(response.status).toBe(status);
    }
    const [row] = await database.db
      .select({ name: user.name })
      .from(user)
      .where(eq(user.email, "carol@example.com"));
    expect(row?.name).toBe("carol");
  });
});
