import { eq } from "drizzle-orm";
import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A 4,096-token window that also answers as the summarizer, and Tier 1 inside the turn.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, { COMPACTION_BACKGROUND: "false" });
});

import { loadHistory } from "@/lib/db/queries/messages";
import { usageOn } from "@/lib/db/queries/usage";
import { user } from "@/lib/db/schema";
import { usageDayOf } from "@/lib/limits/quota-day";
import { register } from "../../helpers/auth";
import { isSummaryRequest } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive, whileInsertsRefused } from "../../helpers/db";
import { longMessage, newChat, postTurn, sendTurn } from "../../helpers/turns";
import { streamChunks } from "../../helpers/ui-stream";

const MODEL = "fake:small";
/** Long enough that the message's failed insert is known well before the summary comes. */
const SUMMARY_MS = 1_500;

type Chunk = Record<string, unknown>;
const isTraceStart = (c: Chunk) =>
  c.type === "tool-input-available" && c.toolName === "compact_context";

afterAll(() => fake.close());
beforeEach(() => fake.reset());

/**
 * A new message stored beside its turn (lib/turn/prepare.ts) whose insert fails while Tier 1
 * still summarizes: the turn ends as it would have — its error reaches the browser, the chat
 * is held until then, and nothing is folded for a message that is not there.
 */
describeEachDriver("a message that cannot be stored while Tier 1 compacts", (use) => {
  it("holds the chat until the turn ends, and the turn's error says why", async () => {
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
    const before = (await usageOn(db, row?.id ?? "", usageDayOf(new Date()))).messages;
    fake.configure({ summaryDelayMs: SUMMARY_MS });
    const seen: Chunk[] = [];
    let heldAtTrace = false;
    try {
      await whileInsertsRefused(db, "message", "new.id = 'u-too-much'", async () => {
        const response = await postTurn(database, browser, {
          chatId,
          modelId: MODEL,
          text: longMessage(3, 1_300),
          id: "u-too-much",
        });
        if (!response.body) throw new Error(`the turn answered ${response.status}`);
        for await (const chunk of streamChunks(response.body)) {
          seen.push(chunk);
          if (isTraceStart(chunk)) heldAtTrace = await isTurnActive(db, chatId);
        }
      });
    } finally {
      fake.configure({ summaryDelayMs: 0 });
    }
    expect(seen.some(isTraceStart)).toBe(true);
    expect(fake.requests.some((r) => isSummaryRequest(r))).toBe(true);
    expect(heldAtTrace).toBe(true);
    const error = seen.find((c) => c.type === "error");
    expect(error?.errorText).toMatch(/could not be stored/);
    expect(seen.some((c) => c.type === "text-delta")).toBe(false);
    expect(await isTurnActive(db, chatId)).toBe(false);
    // Nothing was stored or folded for it, and its message went back to the day.
    expect(await loadHistory(db, chatId)).toEqual(stored);
    expect((await usageOn(db, row?.id ?? "", usageDayOf(new Date()))).messages).toBe(before);
  });
});
