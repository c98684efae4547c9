import { eq, sql } from "drizzle-orm";
import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible HTTP server, configured as Fold's provider before Fold loads; two
// turns a minute per user, so a refused turn that kept its rate point would leave one.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(
    { models: [{ id: "fake-model", maxModelLen: 8192 }] },
    { RATE_LIMIT_TURNS_PER_MINUTE: "2" },
  );
});

import type { Database } from "@/lib/db/client";
import { appendMessage, loadHistory } from "@/lib/db/queries/messages";
import { usageOn } from "@/lib/db/queries/usage";
import { user } from "@/lib/db/schema";
import { usageDayOf } from "@/lib/limits/quota-day";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive, whileInsertsRefused } from "../../helpers/db";
import { newChat, postTurn, sendTurn } from "../../helpers/turns";
import { eventually, readUntilText, textOf } from "../../helpers/ui-stream";

const MODEL = "fake:fake-model";

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.configure({ chunkDelayMs: 0 });
});

/**
 * A new message in a chat already under way is stored beside its model call, not before it
 * (lib/turn/prepare.ts): the turn's history came with its lease, so the provider is asked while
 * the message's row is written. Nothing of the reply reaches the browser before that row is
 * stored, and a message that cannot be stored is refused: nothing of it stays, and it costs
 * neither the day's message nor a turn of the rate limit.
 */
describeEachDriver("a new message stored beside its model call", (use, driver) => {
  /** A user whose chat has one answered turn (and so a title: later turns take this path). */
  async function chatUnderWay(database: Database, email: string) {
    const { browser } = await register(database, email);
    const chatId = await newChat(database, browser);
    const first = await sendTurn(database, browser, { chatId, modelId: MODEL, text: "hello" });
    expect(first.response.status).toBe(200);
    const [row] = await database.db.select().from(user).where(eq(user.email, email));
    if (!row) throw new Error("no user");
    return { browser, chatId, userId: row.id };
  }

  const messagesToday = async (database: Database, userId: string) =>
    (await usageOn(database.db, userId, usageDayOf(new Date()))).messages;

  it.runIf(driver === "pg")(
    "asks the provider while the message is being stored, and streams no reply before it is",
    async () => {
      const database = use();
      const { db } = database;
      const { browser, chatId } = await chatUnderWay(database, "beside@example.com");
      const asked = fake.requests.length;
      // The message's insert takes a while (another connection can read meanwhile).
      await db.execute(sql`
        create function slow_user_insert() returns trigger language plpgsql as $$
        begin if new.role = 'user' then perform pg_sleep(3); end if; return new; end $$`);
      await db.execute(sql`
        create trigger slow_user_insert before insert on message
        for each row execute function slow_user_insert()`);
      try {
        const answered = postTurn(database, browser, {
          chatId,
          modelId: MODEL,
          text: "and now?",
          id: "u-beside",
        });
        await eventually(async () => fake.requests.length > asked);
        // The provider has the message; the chat does not yet.
        expect(JSON.stringify(fake.requests.at(-1)?.body)).toContain("and now?");
        expect((await loadHistory(db, chatId)).map((m) => m.id)).not.toContain("u-beside");
        const { seen, rest } = await readUntilText(await answered);
        // The reply's first text came only once the message was stored.
        expect((await loadHistory(db, chatId)).map((m) => m.id)).toContain("u-beside");
        for await (const chunk of rest) seen.push(chunk);
        expect(textOf(seen)).not.toBe("");
        expect(seen.some((chunk) => chunk.type === "error")).toBe(false);
      } finally {
        await db.execute(sql`drop trigger slow_user_insert on message`);
        await db.execute(sql`drop function slow_user_insert()`);
      }
      await eventually(async () => !(await isTurnActive(db, chatId)));
      const stored = await loadHistory(db, chatId);
      expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
      expect(stored[2]?.id).toBe("u-beside");
    },
  );

  it("refuses a message that cannot be stored: nothing stays, and it costs no turn", async () => {
    const database = use();
    const { db } = database;
    const { browser, chatId, userId } = await chatUnderWay(database, "unstored@example.com");
    const before = await messagesToday(database, userId);
    await whileInsertsRefused(db, "message", "new.id = 'u-unstored'", async () => {
      const response = await postTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: "will this keep?",
        id: "u-unstored",
      });
      expect(response.status).toBe(503);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe("unavailable:message");
      expect(error.message).toMatch(/could not be stored/);
      // Refused once its turn has ended: the chat is free to send it again.
      expect(await isTurnActive(db, chatId)).toBe(false);
    });
    expect((await loadHistory(db, chatId)).map((m) => m.role)).toEqual(["user", "assistant"]);
    // Not answered, or stored, or counted against the day.
    expect(await messagesToday(database, userId)).toBe(before);
    // The chat goes on, and the refused turn took none of the two a minute.
    const next = await sendTurn(database, browser, { chatId, modelId: MODEL, text: "again" });
    expect(next.response.status).toBe(200);
    expect((await loadHistory(db, chatId)).map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
  });

  it.runIf(driver === "pg")(
    "refuses a message whose id another chat took while it was being stored (409)",
    async () => {
      const database = use();
      const { db } = database;
      const { browser, chatId } = await chatUnderWay(database, "clash@example.com");
      const other = await newChat(database, browser);
      // This chat's insert waits; meanwhile another chat stores a message with the same id.
      await db.execute(
        sql.raw(`create function slow_clash() returns trigger language plpgsql as $$
          begin if new.chat_id = '${chatId}' then perform pg_sleep(2); end if; return new; end $$`),
      );
      await db.execute(sql`
        create trigger slow_clash before insert on message
        for each row execute function slow_clash()`);
      try {
        const asked = fake.requests.length;
        const answered = postTurn(database, browser, {
          chatId,
          modelId: MODEL,
          text: "mine",
          id: "u-clash",
        });
        await eventually(async () => fake.requests.length > asked);
        await appendMessage(db, other, {
          id: "u-clash",
          role: "user",
          parts: [{ type: "text", text: "theirs" }],
          metadata: null,
        });
        const response = await answered;
        expect(response.status).toBe(409);
        const { error } = (await response.json()) as { error: { code: string } };
        expect(error.code).toBe("conflict:message");
      } finally {
        await db.execute(sql`drop trigger slow_clash on message`);
        await db.execute(sql`drop function slow_clash()`);
      }
      expect(await isTurnActive(db, chatId)).toBe(false);
      expect((await loadHistory(db, chatId)).map((m) => m.role)).toEqual(["user", "assistant"]);
    },
  );
});
