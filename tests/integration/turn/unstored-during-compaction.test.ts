import { eq } from "drizzle-orm";
import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A 4,096-token window that also answers as the summarizer, and Tier 1 inside the turn.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, { COMPACTION_BACKGROUND: "false" });
});

import { getChat } from "@/lib/db/queries/chats";
import { listCompactionEvents } from "@/lib/db/queries/compaction-events";
import { loadHistory } from "@/lib/db/queries/messages";
import { usageOn } from "@/lib/db/queries/usage";
import { user } from "@/lib/db/schema";
import { usageDayOf } from "@/lib/limits/quota-day";
import { register } from "../../helpers/auth";
import { isSummaryRequest } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive, whileInsertsRefused } from "../../helpers/db";
import { longMessage, newChat, postTurn, sendTurn } from "../../helpers/turns";
import { eventually } from "../../helpers/ui-stream";

const MODEL = "fake:small";
/** Far longer than the test waits: only the turn's own stop ends a summary this slow. */
const SLOW_SUMMARY_MS = 60_000;

afterAll(() => fake.close());
beforeEach(() => fake.reset());

/**
 * A new message stored beside its turn (lib/turn/prepare.ts) whose insert fails while Tier 1
 * summarizes: the request is refused, the turn stops at once (its summarizer's request goes
 * away), and nothing is folded or stored for a message that is not there.
 */
describeEachDriver("a message that cannot be stored while Tier 1 compacts", (use, driver) => {
  // Postgres: the insert fails only after Tier 1 has asked for its summary (on PGlite a slow
  // statement would hold up every other).
  it.runIf(driver === "pg")("is refused, and its turn stops without folding anything", async () => {
    const database = use();
    const { db } = database;
    const { browser } = await register(database, "unstored-compaction@example.com");
    const [row] = await db
      .select()
      .from(user)
      .where(eq(user.email, "unstored-compaction@example.com"));
    const chatId = await newChat(database, browser);
    for (let turn = 0; turn < 3; turn++) {
      const sent = await sendTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: longMessage(turn),
      });
      expect(sent.chunks.some((c) => c.type === "error")).toBe(false);
    }
    const stored = await loadHistory(db, chatId);
    const chat = await getChat(db, chatId);
    const before = (await usageOn(db, row?.id ?? "", usageDayOf(new Date()))).messages;
    fake.configure({ summaryDelayMs: SLOW_SUMMARY_MS });
    try {
      await whileInsertsRefused(
        db,
        "message",
        "new.id = 'u-too-much'",
        async () => {
          const response = await postTurn(database, browser, {
            chatId,
            modelId: MODEL,
            // Long enough that Tier 1 must fold the turns before it.
            text: longMessage(3, 1_300),
            id: "u-too-much",
          });
          expect(response.status).toBe(503);
          const { error } = (await response.json()) as { error: { message: string } };
          expect(error.message).toMatch(/could not be stored/);
        },
        { afterMs: 1_000 },
      );
      // Refused once its turn ended, long before the summary would have come: the summary it
      // asked for went away.
      expect(await isTurnActive(db, chatId)).toBe(false);
      const summaries = fake.requests.filter((r) => isSummaryRequest(r));
      expect(summaries).toHaveLength(1);
      await eventually(async () => summaries.every((r) => r.abortedAt !== null));
    } finally {
      fake.configure({ summaryDelayMs: 0 });
    }
    // Nothing was stored or folded for it, and its message went back to the day.
    expect(await loadHistory(db, chatId)).toEqual(stored);
    expect((await getChat(db, chatId))?.version).toBe(chat?.version);
    expect(await listCompactionEvents(db, chatId)).toEqual([]);
    expect((await usageOn(db, row?.id ?? "", usageDayOf(new Date()))).messages).toBe(before);
  });
});
