import { eq } from "drizzle-orm";
import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible HTTP server, configured as Fold's provider before Fold loads.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({ models: [{ id: "fake-model", maxModelLen: 8192 }] });
});

import type { Database } from "@/lib/db/client";
import { loadHistory } from "@/lib/db/queries/messages";
import { usageOn } from "@/lib/db/queries/usage";
import { user } from "@/lib/db/schema";
import { usageDayOf } from "@/lib/limits/quota-day";
import { register, signOut } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import type { Browser } from "../../helpers/http";
import { answeredOnce, postTurn, sendTurn } from "../../helpers/turns";

const MODEL = "fake:fake-model";

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.configure({ chunkDelayMs: 0 });
});

/**
 * A turn's admission runs beside the check that lately verified cookies still hold a session
 * (lib/auth/guards.ts requireUserFor): when they no longer do, nothing it took may stay.
 */
describeEachDriver("a turn from cookies whose session changed since they were verified", (use) => {
  /** A user with one answered turn: their cookies are verified and remembered. */
  const answered = (database: Database, email: string) => answeredOnce(database, email, MODEL);

  const messagesToday = async (database: Database, userId: string) =>
    (await usageOn(database.db, userId, usageDayOf(new Date()))).messages;

  async function expectNothingTaken(
    database: Database,
    chatId: string,
    userId: string,
    before: number,
  ) {
    expect((await loadHistory(database.db, chatId)).map((m) => m.role)).toEqual([
      "user",
      "assistant",
    ]);
    expect(await isTurnActive(database.db, chatId)).toBe(false);
    expect(await messagesToday(database, userId)).toBe(before);
  }

  it("answers 401 to a signed-out session's cookies, storing nothing and holding nothing", async () => {
    const database = use();
    // The first account is an admin: this test's is the second.
    await register(database, "first@example.com");
    const { browser, chatId, userId } = await answered(database, "out@example.com");
    const copy: Browser = { cookie: browser.cookie };
    const before = await messagesToday(database, userId);
    expect((await signOut(database, browser)).status).toBe(200);

    const refused = await postTurn(database, copy, { chatId, modelId: MODEL, text: "again" });
    expect(refused.status).toBe(401);
    await expectNothingTaken(database, chatId, userId, before);
  });

  it("answers 403 to a disabled account's cookies, storing nothing and holding nothing", async () => {
    const database = use();
    const { browser, chatId, userId } = await answered(database, "off@example.com");
    const before = await messagesToday(database, userId);
    await database.db.update(user).set({ status: "disabled" }).where(eq(user.id, userId));

    const refused = await postTurn(database, browser, { chatId, modelId: MODEL, text: "again" });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: "forbidden:account_disabled" } });
    await expectNothingTaken(database, chatId, userId, before);
  });

  it("answers a user whose role changed as they are now, taking one message once", async () => {
    const database = use();
    const { browser, chatId, userId } = await answered(database, "role@example.com");
    const before = await messagesToday(database, userId);
    const [row] = await database.db.select().from(user).where(eq(user.id, userId));
    await database.db
      .update(user)
      .set({ role: row?.role === "admin" ? "user" : "admin" })
      .where(eq(user.id, userId));

    const turn = await sendTurn(database, browser, { chatId, modelId: MODEL, text: "again" });
    expect(turn.response.status).toBe(200);
    expect((await loadHistory(database.db, chatId)).map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(await messagesToday(database, userId)).toBe(before + 1);
  });
});
