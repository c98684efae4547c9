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
import { acquireLease, releaseLease } from "@/lib/db/queries/leases";
import { appendMessage, loadHistory } from "@/lib/db/queries/messages";
import { usageOn } from "@/lib/db/queries/usage";
import { usageDayOf } from "@/lib/limits/quota-day";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive, whileInsertsRefused, whileInsertsSlowed } from "../../helpers/db";
import type { Browser } from "../../helpers/http";
import { answeredOnce, newChat, postTurn, sendTurn } from "../../helpers/turns";
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
  const chatUnderWay = (database: Database, email: string) => answeredOnce(database, email, MODEL);

  const messagesToday = async (database: Database, userId: string) =>
    (await usageOn(database.db, userId, usageDayOf(new Date()))).messages;

  /** Sends a message; once the provider has been asked, its response still to come. */
  async function sentToProvider(
    database: Database,
    browser: Browser,
    input: { chatId: string; text: string; id: string },
  ): Promise<{ answered: Promise<Response> }> {
    const asked = fake.requests.length;
    const answered = postTurn(database, browser, { ...input, modelId: MODEL });
    await eventually(async () => fake.requests.length > asked);
    return { answered };
  }

  it.runIf(driver === "pg")(
    "asks the provider while the message is being stored, and streams no reply before it is",
    async () => {
      const database = use();
      const { db } = database;
      const { browser, chatId } = await chatUnderWay(database, "beside@example.com");
      // The message's insert takes a while (another connection can read meanwhile).
      await whileInsertsSlowed(db, "message", "new.role = 'user'", 3_000, async () => {
        const { answered } = await sentToProvider(database, browser, {
          chatId,
          text: "and now?",
          id: "u-beside",
        });
        // The provider has the message; the chat does not yet.
        expect(JSON.stringify(fake.requests.at(-1)?.body)).toContain("and now?");
        expect((await loadHistory(db, chatId)).map((m) => m.id)).not.toContain("u-beside");
        const { seen, rest } = await readUntilText(await answered);
        // The reply's first text came only once the message was stored.
        expect((await loadHistory(db, chatId)).map((m) => m.id)).toContain("u-beside");
        for await (const chunk of rest) seen.push(chunk);
        expect(textOf(seen)).not.toBe("");
        expect(seen.some((chunk) => chunk.type === "error")).toBe(false);
      });
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
      await whileInsertsSlowed(db, "message", `new.chat_id = '${chatId}'`, 2_000, async () => {
        const { answered } = await sentToProvider(database, browser, {
          chatId,
          text: "mine",
          id: "u-clash",
        });
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
      });
      expect(await isTurnActive(db, chatId)).toBe(false);
      expect((await loadHistory(db, chatId)).map((m) => m.role)).toEqual(["user", "assistant"]);
    },
  );
  it("a turn refused because its chat is busy costs no turn either", async () => {
    const database = use();
    const { db } = database;
    const { browser, chatId } = await chatUnderWay(database, "busy-refund@example.com");
    const lease = await acquireLease(db, chatId, 60_000);
    if (!lease) throw new Error("no lease");
    const busy = await postTurn(database, browser, { chatId, modelId: MODEL, text: "busy?" });
    expect(busy.status).toBe(409);
    await releaseLease(db, lease);
    // The first turn took one of the two a minute; the refused one none.
    const next = await sendTurn(database, browser, { chatId, modelId: MODEL, text: "now?" });
    expect(next.response.status).toBe(200);
  });

  it("a new chat's first message whose id another chat holds is refused (409) and costs no turn", async () => {
    const database = use();
    const { db } = database;
    const { browser, chatId } = await chatUnderWay(database, "clash-refund@example.com");
    const [held] = await loadHistory(db, chatId);
    if (!held) throw new Error("no message");
    const fresh = await newChat(database, browser);
    const clash = await postTurn(database, browser, {
      chatId: fresh,
      modelId: MODEL,
      text: "mine",
      id: held.id,
    });
    expect(clash.status).toBe(409);
    expect(await loadHistory(db, fresh)).toEqual([]);
    const next = await sendTurn(database, browser, { chatId: fresh, modelId: MODEL, text: "hi" });
    expect(next.response.status).toBe(200);
  });
});
