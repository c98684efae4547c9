import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A 4,096-token window that also answers as the summarizer, and Tier 1 inside the turn.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, {
    COMPACTION_BACKGROUND: "false",
  });
});

import * as stopRoute from "@/app/api/chats/[id]/stop/route";
import type { Database } from "@/lib/db/client";
import { listBranches } from "@/lib/db/queries/branches";
import { listCompactionEvents } from "@/lib/db/queries/compaction-events";
import { usageOn } from "@/lib/db/queries/usage";
import { usageDayOf } from "@/lib/limits/quota-day";
import { register, sessionOf } from "../../helpers/auth";
import { isSummaryRequest } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";
import {
  longMessage,
  newChat,
  postRegenerate,
  postTurn,
  sendTurn,
  shownChat,
} from "../../helpers/turns";
import { eventually, readChunks, streamChunks } from "../../helpers/ui-stream";

const MODEL = "fake:small";
/** Far longer than the test waits: only a stop ends a compaction this slow. */
const SLOW_SUMMARY_MS = 60_000;
const MAX_TURNS = 15;

type Chunk = Record<string, unknown>;
const isTraceStart = (c: Chunk) =>
  c.type === "tool-input-available" && c.toolName === "compact_context";

afterAll(() => fake.close());
beforeEach(() => fake.reset());

/**
 * Long turns until one starts compacting; that turn's stream, read up to its running trace.
 * Turns before it end by themselves (the slow summarizer is never asked).
 */
async function turnThatCompacts(database: Database, browser: Browser, chatId: string) {
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const response = await postTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: longMessage(turn),
    });
    if (!response.body) throw new Error(`turn ${turn} answered ${response.status}`);
    const stream = streamChunks(response.body);
    const seen: Chunk[] = [];
    // next() by hand: leaving a for-await loop would cancel the stream.
    for (let next = await stream.next(); !next.done; next = await stream.next()) {
      seen.push(next.value);
      if (isTraceStart(next.value)) return { seen, rest: stream };
    }
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
  }
  throw new Error(`no turn compacted in ${MAX_TURNS} turns`);
}

describeEachDriver("Stop while Tier 1 compacts", (use) => {
  it("aborts the summarizer, ends the trace and the turn as stopped, and leaves the chat as it was", async () => {
    const database = use();
    const { browser } = await register(database, "stop-compaction@example.com");
    const chatId = await newChat(database, browser);
    fake.configure({ summaryDelayMs: SLOW_SUMMARY_MS });
    try {
      const { seen, rest } = await turnThatCompacts(database, browser, chatId);
      const before = await shownChat(database, browser, chatId);
      const modelCallsBefore = fake.requests.filter((r) => !isSummaryRequest(r)).length;

      const stopSentAt = Date.now();
      const stop = await call(database, stopRoute.POST, {
        path: `/api/chats/${chatId}/stop`,
        method: "POST",
        params: { id: chatId },
        browser,
      });
      expect(stop.status).toBe(202);
      for (let next = await rest.next(); !next.done; next = await rest.next()) {
        seen.push(next.value);
      }
      // The stream ended soon after the stop, not when the summarizer would have.
      expect(Date.now() - stopSentAt).toBeLessThan(5_000);

      const end = seen.find((c) => c.type === "tool-output-available");
      expect(end?.output).toMatchObject({ outcome: "stopped", tokensAfter: expect.any(Number) });
      const finish = seen.find((c) => c.type === "finish") as {
        messageMetadata?: { stopped?: boolean };
      };
      expect(finish.messageMetadata?.stopped).toBe(true);
      expect(seen.some((c) => c.type === "error")).toBe(false);
      expect(seen.some((c) => c.type === "text-delta")).toBe(false);

      // The summarizer's request, if it had gone out yet, went away; no model call followed.
      // (The provider sees the connection close a moment after Fold lets go of it.)
      const summaries = fake.requests.filter((r) => isSummaryRequest(r));
      await eventually(async () => summaries.every((r) => r.abortedAt !== null));
      for (const r of summaries) expect((r.abortedAt ?? 0) - stopSentAt).toBeLessThan(2_000);
      expect(fake.requests.filter((r) => !isSummaryRequest(r))).toHaveLength(modelCallsBefore);

      // Nothing was written: no reply, no summary, no compaction event; the chat is free.
      await eventually(async () => !(await isTurnActive(database.db, chatId)));
      const after = await shownChat(database, browser, chatId);
      expect(after.messages).toHaveLength(before.messages.length);
      expect(after.messages.at(-1)?.role).toBe("user");
      expect(after.chat.contextSummary).toBe(before.chat.contextSummary);
      expect(after.chat.summaryWatermark).toBe(before.chat.summaryWatermark);
      expect(await listCompactionEvents(database.db, chatId)).toEqual([]);
      // Nothing was answered: the message goes back to the day, as a refused one does.
      const answered = after.messages.filter((m) => m.role === "assistant").length;
      const userId = (await sessionOf(database, browser))?.user.id ?? "";
      expect((await usageOn(database.db, userId, usageDayOf(new Date()))).messages).toBe(answered);
    } finally {
      fake.configure({ summaryDelayMs: 0 });
    }

    // The next message compacts and is answered as if the stop had not happened.
    const next = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Let us try that again.",
    });
    expect(next.chunks.some((c) => c.type === "error")).toBe(false);
    const end = next.chunks.find((c) => c.type === "tool-output-available");
    expect(end?.output).toMatchObject({ outcome: "summarized" });
    const events = await listCompactionEvents(database.db, chatId);
    expect(events.map((e) => e.outcome)).toEqual(["summarized"]);
  });

  it("keeps a fold stored before the stop as its own timeline entry, and no reply, when the model had written nothing", async () => {
    const database = use();
    const { browser } = await register(database, "stop-after-fold@example.com");
    const chatId = await newChat(database, browser);
    // The summarizer answers after a moment; the model then keeps the reply waiting, so the
    // stop comes once the fold is stored and before the model has written anything.
    fake.configure({ summaryDelayMs: 1_000, scriptSummarizer: false });
    try {
      const { seen, rest } = await turnThatCompacts(database, browser, chatId);
      fake.script({ fault: "slow", delayMs: SLOW_SUMMARY_MS });
      for (let next = await rest.next(); !next.done; next = await rest.next()) {
        seen.push(next.value);
        if (next.value.type === "tool-output-available") break;
      }
      const end = seen.find((c) => c.type === "tool-output-available");
      expect(end?.output).toMatchObject({ outcome: "summarized" });
      const reply = seen.find((c) => c.type === "start") as { messageId: string };
      // The model's request is out (and waits): the stop lands in the model call.
      await eventually(async () => fake.requests.some((r) => !isSummaryRequest(r) && r.stream));
      const stop = await call(database, stopRoute.POST, {
        path: `/api/chats/${chatId}/stop`,
        method: "POST",
        params: { id: chatId },
        browser,
      });
      expect(stop.status).toBe(202);
      for (let next = await rest.next(); !next.done; next = await rest.next()) {
        seen.push(next.value);
      }
      const finish = seen.find((c) => c.type === "finish") as {
        messageMetadata?: { stopped?: boolean };
      };
      expect(finish.messageMetadata?.stopped).toBe(true);
      expect(seen.some((c) => c.type === "text-delta")).toBe(false);

      // The fold stands, told by its entry under the reply's id; the message is unanswered.
      await eventually(async () => !(await isTurnActive(database.db, chatId)));
      const after = await shownChat(database, browser, chatId);
      const [asked, entry] = after.messages.slice(-2);
      expect(asked?.role).toBe("user");
      expect(entry).toMatchObject({
        id: reply.messageId,
        role: "assistant",
        metadata: { compaction: true },
        parts: [{ type: "tool-compact_context", output: { outcome: "summarized" } }],
      });
      expect(after.chat.contextSummary).not.toBeNull();
      expect((await listCompactionEvents(database.db, chatId)).map((e) => e.outcome)).toEqual([
        "summarized",
      ]);

      // A page that still shows the stopped reply (one from before the page showed the entry)
      // asks for it again by its id: the message it follows is answered where the chat stands,
      // the fold in place and no earlier version made of it.
      fake.reset();
      const again = await postRegenerate(database, browser, {
        chatId,
        modelId: MODEL,
        messageId: reply.messageId,
      });
      expect(again.status).toBe(200);
      await readChunks(again);
      await eventually(async () => !(await isTurnActive(database.db, chatId)));
      const answered = await shownChat(database, browser, chatId);
      expect(answered.messages.slice(-3).map((m) => m.id)).toEqual([
        asked?.id,
        reply.messageId,
        expect.any(String),
      ]);
      expect(answered.messages.at(-2)?.metadata).toMatchObject({ compaction: true });
      expect(answered.messages.at(-1)?.parts).toContainEqual(
        expect.objectContaining({ type: "text" }),
      );
      expect(await listBranches(database.db, chatId)).toEqual([]);
    } finally {
      fake.configure({ summaryDelayMs: 0, scriptSummarizer: true });
    }
  });
});
