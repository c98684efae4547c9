import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a 4,096-token window; it also answers as the summarizer.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW);
});

import * as userRoute from "@/app/api/admin/users/[id]/route";
import * as stopRoute from "@/app/api/chats/[id]/stop/route";
import type { Database } from "@/lib/db/client";
import { casCompactionState } from "@/lib/db/compaction-state";
import { branchSlotsOf } from "@/lib/db/queries/branches";
import { acquireLease, releaseLease } from "@/lib/db/queries/leases";
import { updateUserRow } from "@/lib/db/queries/users";
import * as rateLimit from "@/lib/limits/rate-limit";
import { register, sessionOf } from "../../helpers/auth";
import {
  type CompactResponse,
  chatRow,
  compactNowCall,
  contextOf,
  conversationOf,
  eventsOf,
  historyOf,
  isSummaryRequest,
  isTraceEntry,
  lastUserTextOf,
  pinCall,
} from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive, whileInsertsRefused } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";
import {
  deleteChat,
  longMessage,
  newChat,
  postRegenerate,
  postTurn,
  sendTurn,
} from "../../helpers/turns";
import { eventually, readChunks } from "../../helpers/ui-stream";

const MODEL = "fake:small";
/** Three long turns: well past one keep window, still under the 4,096-token trigger. */
const TURNS = 3;

afterAll(() => fake.close());
beforeEach(() => fake.reset());

async function chatWithHistory(database: Database, email: string) {
  const { browser } = await register(database, email);
  const chatId = await newChat(database, browser);
  for (let turn = 0; turn < TURNS; turn++) {
    const { response } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: longMessage(turn),
    });
    expect(response.status).toBe(200);
  }
  // Under the trigger: no turn compacted on its own.
  expect(await eventsOf(database.db, chatId)).toEqual([]);
  return { browser, chatId };
}

async function snapshot(database: Database, chatId: string) {
  return {
    chat: await chatRow(database.db, chatId),
    history: await historyOf(database.db, chatId),
    events: await eventsOf(database.db, chatId),
  };
}

describeEachDriver("Compact now (POST /api/chats/:id/compact)", (use) => {
  it("summarizes everything but the keep window, stores a trace entry and a manual event, and lowers the projection", async () => {
    const database = use();
    const { browser, chatId } = await chatWithHistory(database, "now@example.com");
    const historyBefore = await historyOf(database.db, chatId);

    const response = await compactNowCall(database, browser, chatId, { modelId: MODEL });
    expect(response.status).toBe(200);
    const body = (await response.json()) as CompactResponse;
    expect(body.trace?.outcome).toBe("summarized");
    expect(body.trace?.reason).toBe("manual");
    expect(body.trace?.tokensAfter).toBeLessThan(body.trace?.tokensBefore ?? 0);
    expect(fake.requests.filter(isSummaryRequest)).toHaveLength(1);

    // The durable state: a summary and a watermark on a stored message before the last turn.
    const chat = await chatRow(database.db, chatId);
    expect(chat.contextSummary).toContain("## Goal & open requests");
    expect(chat.compactionDirty).toBe(false);
    expect(chat.version).toBe(1);
    const watermarkIndex = historyBefore.findIndex((m) => m.id === chat.summaryWatermark);
    expect(watermarkIndex).toBeGreaterThanOrEqual(0);
    const lastUser = historyBefore.findLastIndex((m) => m.role === "user");
    expect(watermarkIndex).toBeLessThan(lastUser);

    // One compaction_event, reason manual, that wrote exactly this state.
    const events = await eventsOf(database.db, chatId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      reason: "manual",
      outcome: "summarized",
      summary: chat.contextSummary,
      watermarkFrom: null,
      watermarkTo: chat.summaryWatermark,
      messagesSummarized: watermarkIndex + 1,
      summarizerModel: MODEL,
    });

    // A trace-only assistant entry in the timeline, after the last reply.
    const history = await historyOf(database.db, chatId);
    expect(history).toHaveLength(historyBefore.length + 1);
    const entry = history.at(-1);
    expect(entry?.role).toBe("assistant");
    expect(entry?.metadata).toMatchObject({ compaction: true });
    expect(entry?.parts).toHaveLength(1);
    expect(entry?.parts[0]).toMatchObject({
      type: "tool-compact_context",
      state: "output-available",
      output: { outcome: "summarized", reason: "manual" },
    });
    expect(body.message?.id).toBe(entry?.id);

    // The lease is released.
    expect(await isTurnActive(database.db, chatId)).toBe(false);
  });

  it("returns the new usage so the ring drops at once, and GET /context agrees", async () => {
    const database = use();
    const { browser, chatId } = await chatWithHistory(database, "ring@example.com");
    const before = await contextOf(database, browser, chatId, MODEL);

    const response = await compactNowCall(database, browser, chatId, { modelId: MODEL });
    expect(response.status).toBe(200);
    const body = (await response.json()) as CompactResponse;
    expect(body.trace?.outcome).toBe("summarized");

    // The response carries the usage after the compaction, not before it.
    expect(body.context.projectedTokens).toBeLessThan(before.projectedTokens);
    // And the ring's next GET shows the same drop.
    const after = await contextOf(database, browser, chatId, MODEL);
    expect(after.projectedTokens).toBeLessThan(before.projectedTokens);
    expect(after.projectedTokens).toBe(body.context.projectedTokens);
    // The compaction landed under the target, and so does what the ring shows.
    expect(body.trace?.tokensAfter).toBeLessThanOrEqual(before.budget.target);
    expect(after.projectedTokens).toBeLessThanOrEqual(before.budget.target);
  });

  it("a second Compact now right after the first, with too little new to fold, keeps the chat as it is rather than grow it", async () => {
    const database = use();
    const { browser } = await register(database, "twice@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(0) });
    // A pinned first message: it stays verbatim beside the summary.
    const [first] = await historyOf(database.db, chatId);
    if (!first) throw new Error("no first message");
    await pinCall(database, browser, chatId, { messageId: first.id, pinned: true });
    for (let t = 1; t < 4; t++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(t) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const before = await contextOf(database, browser, chatId, MODEL);
    const entries = (await historyOf(database.db, chatId)).filter(isTraceEntry).length;
    const { contextSummary } = await chatRow(database.db, chatId);

    const again = await compactNowCall(database, browser, chatId, { modelId: MODEL });
    expect(again.status).toBe(200);
    const body = (await again.json()) as CompactResponse;
    expect(body.trace?.outcome).toBe("skipped");
    expect((await contextOf(database, browser, chatId, MODEL)).projectedTokens).toBe(
      before.projectedTokens,
    );
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(contextSummary);
    expect((await historyOf(database.db, chatId)).filter(isTraceEntry)).toHaveLength(entries);
  });

  it("answers 409 while a turn holds the lease, and writes nothing", async () => {
    const database = use();
    const { browser, chatId } = await chatWithHistory(database, "busy@example.com");
    const before = await snapshot(database, chatId);
    fake.reset();

    const lease = await acquireLease(database.db, chatId, 60_000);
    if (!lease) throw new Error("the lease was not free");
    try {
      const response = await compactNowCall(database, browser, chatId, { modelId: MODEL });
      expect(response.status).toBe(409);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        "conflict:turn",
      );
      expect(fake.requests).toEqual([]);
      const after = await snapshot(database, chatId);
      expect(after.chat.version).toBe(before.chat.version);
      expect(after.chat.contextSummary).toBeNull();
      expect(after.chat.summaryWatermark).toBeNull();
      expect(after.history.map((m) => m.id)).toEqual(before.history.map((m) => m.id));
      expect(after.events).toEqual([]);
      // The refused request did not steal or drop the turn's lease.
      expect(await isTurnActive(database.db, chatId)).toBe(true);
    } finally {
      await releaseLease(database.db, lease);
    }
  });

  it("a stop for the chat, or the owner's account disabled, ends it: the summarizer is aborted, nothing is written, and its rate point stays spent", async () => {
    const database = use();
    const stopChat = (browser: Browser, chatId: string) =>
      call(database, stopRoute.POST, {
        path: `/api/chats/${chatId}/stop`,
        method: "POST",
        params: { id: chatId },
        browser,
      });
    const admin = await register(database, `stop-admin-${crypto.randomUUID()}@example.com`);
    const adminId = (await sessionOf(database, admin.browser))?.user.id ?? "";
    await updateUserRow(database.db, adminId, { role: "admin" });
    await sessionOf(database, admin.browser);
    const disableOwner = async (_browser: Browser, chatId: string) => {
      const owner = (await chatRow(database.db, chatId)).userId;
      return call(database, userRoute.PATCH, {
        path: `/api/admin/users/${owner}`,
        method: "PATCH",
        body: { status: "disabled" },
        params: { id: owner },
        browser: admin.browser,
      });
    };
    for (const [how, stopIt] of [
      ["stop", stopChat],
      ["disable", disableOwner],
    ] as const) {
      const email = `compact-${how}-${crypto.randomUUID()}@example.com`;
      const { browser, chatId } = await chatWithHistory(database, email);
      const before = await snapshot(database, chatId);
      fake.reset();
      fake.configure({ summaryDelayMs: 60_000 });
      // The provider was called: the rate limit's point stays spent.
      const refund = vi.fn(async () => undefined);
      const consume = vi.spyOn(rateLimit, "consumeRateLimit").mockResolvedValue({ refund });
      try {
        const compacting = compactNowCall(database, browser, chatId, { modelId: MODEL });
        await eventually(async () => fake.requests.some(isSummaryRequest));
        const stoppedAt = Date.now();
        const stop = await stopIt(browser, chatId);
        expect(stop.status).toBeLessThan(300);
        const response = await compacting;
        // Answered at the stop, not when the summarizer would have.
        expect(Date.now() - stoppedAt).toBeLessThan(5_000);
        expect(response.status).toBe(409);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
          "conflict:stopped",
        );
        await eventually(async () => fake.requests.every((r) => r.abortedAt !== null));
        const after = await snapshot(database, chatId);
        expect(after.chat.version).toBe(before.chat.version);
        expect(after.chat.contextSummary).toBeNull();
        expect(after.history.map((m) => m.id)).toEqual(before.history.map((m) => m.id));
        expect(after.events).toEqual([]);
        expect(await isTurnActive(database.db, chatId)).toBe(false);
        expect(consume).toHaveBeenCalledWith("compact", after.chat.userId);
        expect(refund).not.toHaveBeenCalled();
      } finally {
        consume.mockRestore();
        fake.configure({ summaryDelayMs: 0 });
      }
    }
  });

  it("a chat deleted while Compact now waits for a background compaction answers 404, not 'the chat is as it was'", async () => {
    const database = use();
    const { browser, chatId } = await chatWithHistory(database, "compact-deleted@example.com");
    // A background compaction holds the chat (another instance's, say).
    expect(await acquireLease(database.db, chatId, 60_000, "compaction")).not.toBeNull();
    const compacting = compactNowCall(database, browser, chatId, { modelId: MODEL });
    // Compact now holds the chat's turn lease and waits for the compaction.
    await eventually(() => isTurnActive(database.db, chatId));
    const deleted = await deleteChat(database, browser, chatId);
    expect(deleted.status).toBe(204);
    const response = await compacting;
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      "not_found:chat",
    );
  });

  it("a compaction whose event cannot be stored keeps no summary either (the summary and its rollback point go together)", async () => {
    const database = use();
    const { browser, chatId } = await chatWithHistory(database, "event-lost@example.com");
    const before = await snapshot(database, chatId);
    // The database refuses the compaction's event row (as a failover between two writes would).
    await whileInsertsRefused(
      database.db,
      "compaction_event",
      "new.reason = 'manual'",
      async () => {
        const response = await compactNowCall(database, browser, chatId, { modelId: MODEL });
        expect(response.status).toBeGreaterThanOrEqual(500);
      },
    );
    const after = await snapshot(database, chatId);
    expect(after.chat.contextSummary).toBeNull();
    expect(after.chat.summaryWatermark).toBeNull();
    expect(after.chat.version).toBe(before.chat.version);
    expect(after.events).toEqual([]);
    // Asked again, it compacts.
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    expect((await chatRow(database.db, chatId)).contextSummary).toBeTruthy();
  });

  it("a compaction whose timeline entry cannot be stored keeps no summary either: Compact failed means nothing folded", async () => {
    const database = use();
    const { browser, chatId } = await chatWithHistory(database, "entry-lost@example.com");
    const before = await snapshot(database, chatId);
    const rows = (await historyOf(database.db, chatId)).length;
    // The database refuses the entry's row, after the summarizer wrote the summary.
    await whileInsertsRefused(
      database.db,
      "message",
      "new.metadata ->> 'compaction' = 'true'",
      async () => {
        const response = await compactNowCall(database, browser, chatId, { modelId: MODEL });
        expect(response.status).toBeGreaterThanOrEqual(500);
      },
    );
    const after = await snapshot(database, chatId);
    expect(after.chat.contextSummary).toBeNull();
    expect(after.chat.summaryWatermark).toBeNull();
    expect(after.chat.version).toBe(before.chat.version);
    expect(after.events).toEqual([]);
    expect(await historyOf(database.db, chatId)).toHaveLength(rows);
    // Asked again, it compacts, and its entry is in the timeline.
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    expect((await chatRow(database.db, chatId)).contextSummary).toBeTruthy();
    expect(
      isTraceEntry((await historyOf(database.db, chatId)).at(-1) ?? { parts: [], metadata: null }),
    ).toBe(true);
  });

  it("a fold that loses its commit to another summary keeps that one, and its entry says so", async () => {
    const database = use();
    const { browser, chatId } = await chatWithHistory(database, "entry-conflict@example.com");
    const rows = (await historyOf(database.db, chatId)).length;
    fake.configure({ summaryDelayMs: 500 });
    try {
      const compacting = compactNowCall(database, browser, chatId, { modelId: MODEL });
      // While the summarizer writes, another summary lands (a fold, or an edit, on another
      // instance that did not wait for this one's lease).
      await eventually(async () => fake.requests.some(isSummaryRequest));
      const { version } = await chatRow(database.db, chatId);
      const other = await casCompactionState(database.db, chatId, version, {
        contextSummary: "## Someone else's summary",
      });
      expect(other?.won).toBe(true);
      const response = await compacting;
      expect(response.status).toBe(200);
      expect(((await response.json()) as { trace: { outcome: string } }).trace.outcome).toBe(
        "conflict",
      );
    } finally {
      fake.configure({ summaryDelayMs: 0 });
    }
    expect((await chatRow(database.db, chatId)).contextSummary).toBe("## Someone else's summary");
    // One entry, telling the conflict: none for the fold that did not land.
    const history = await historyOf(database.db, chatId);
    expect(history).toHaveLength(rows + 1);
    const entry = history.at(-1) as { parts: Array<{ output?: { outcome?: string } }> } | undefined;
    expect(entry && isTraceEntry(entry as never)).toBe(true);
    expect(entry?.parts[0]?.output?.outcome).toBe("conflict");
    expect((await eventsOf(database.db, chatId)).map((e) => e.outcome)).toEqual(["conflict"]);
  });

  it("answers 404 for another user's chat, and writes nothing", async () => {
    const database = use();
    const { chatId } = await chatWithHistory(database, "owner@example.com");
    const before = await snapshot(database, chatId);
    const { browser: stranger } = await register(database, "stranger@example.com");
    fake.reset();

    const response = await compactNowCall(database, stranger, chatId, { modelId: MODEL });
    expect(response.status).toBe(404);
    expect(fake.requests).toEqual([]);
    const after = await snapshot(database, chatId);
    expect(after.chat.version).toBe(before.chat.version);
    expect(after.history).toHaveLength(before.history.length);
    expect(after.events).toEqual([]);
  });

  it("answers 400 for a bad modelId, and writes nothing", async () => {
    const database = use();
    const { browser, chatId } = await chatWithHistory(database, "badmodel@example.com");
    const before = await snapshot(database, chatId);
    fake.reset();

    for (const modelId of ["not a model id", "nowhere:model", "fake:"]) {
      const response = await compactNowCall(database, browser, chatId, { modelId });
      expect(response.status, modelId).toBe(400);
    }
    expect(fake.requests).toEqual([]);
    const after = await snapshot(database, chatId);
    expect(after.chat.version).toBe(before.chat.version);
    expect(after.history).toHaveLength(before.history.length);
    expect(after.events).toEqual([]);
    expect(await isTurnActive(database.db, chatId)).toBe(false);
  });

  it("on an empty chat answers 200 with trace null and writes nothing", async () => {
    const database = use();
    const { browser } = await register(database, "empty@example.com");
    const chatId = await newChat(database, browser);

    const response = await compactNowCall(database, browser, chatId, { modelId: MODEL });
    expect(response.status).toBe(200);
    const body = (await response.json()) as CompactResponse;
    expect(body.trace).toBeNull();
    expect(body.message).toBeNull();
    expect(fake.requests).toEqual([]);
    const after = await snapshot(database, chatId);
    expect(after.chat.version).toBe(0);
    expect(after.history).toEqual([]);
    expect(after.events).toEqual([]);
    expect(await isTurnActive(database.db, chatId)).toBe(false);
  });

  it("with nothing to fold answers 'skipped' without adding a trace entry, however often it is asked", async () => {
    const database = use();
    const { browser } = await register(database, "nothing@example.com");
    const chatId = await newChat(database, browser);
    const { response: turn } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "A short question.",
    });
    expect(turn.status).toBe(200);
    const historyBefore = await historyOf(database.db, chatId);
    fake.reset();

    for (let click = 0; click < 2; click++) {
      const response = await compactNowCall(database, browser, chatId, { modelId: MODEL });
      expect(response.status).toBe(200);
      const body = (await response.json()) as CompactResponse;
      expect(body.trace?.outcome).toBe("skipped");
      expect(body.message).toBeNull();
    }
    expect(fake.requests).toEqual([]);
    // The timeline is untouched: the last entry is still the reply, so Regenerate stays on it.
    const history = await historyOf(database.db, chatId);
    expect(history.map((m) => m.id)).toEqual(historyBefore.map((m) => m.id));
    expect(history.at(-1)?.role).toBe("assistant");
    expect(history.some(isTraceEntry)).toBe(false);
    expect(await isTurnActive(database.db, chatId)).toBe(false);
  });

  it("a regenerate after compact-now regenerates the last real reply, not the trace entry", async () => {
    const database = use();
    const { browser, chatId } = await chatWithHistory(database, "regen@example.com");
    const compacted = await compactNowCall(database, browser, chatId, { modelId: MODEL });
    expect(compacted.status).toBe(200);
    const before = await historyOf(database.db, chatId);
    const entry = before.at(-1);
    expect(entry && isTraceEntry(entry)).toBe(true);
    const lastReply = conversationOf(before).at(-1);
    expect(lastReply?.role).toBe("assistant");
    const chatBefore = await chatRow(database.db, chatId);
    fake.reset();

    const response = await regenerate(database, browser, chatId);
    expect(response.status).toBe(200);
    const chunks = await readChunks(response);
    expect(chunks.some((c) => c.type === "error")).toBe(false);
    await eventually(async () => !(await isTurnActive(database.db, chatId)));

    const after = await historyOf(database.db, chatId);
    const conversation = conversationOf(after);
    // Same turns, with the last reply replaced by a new one.
    expect(conversation).toHaveLength(conversationOf(before).length);
    expect(conversation.slice(0, -1).map((m) => m.id)).toEqual(
      conversationOf(before)
        .slice(0, -1)
        .map((m) => m.id),
    );
    const reply = conversation.at(-1);
    expect(reply?.role).toBe("assistant");
    expect(reply?.id).not.toBe(lastReply?.id);
    expect(after.some((m) => m.id === lastReply?.id)).toBe(false);
    // The compaction's entry stays in the timeline, before the new reply: its summary stands.
    expect(after.at(-2)?.id).toBe(entry?.id);

    // The model was asked to answer the last question again, over the summary.
    const chatRequests = fake.requests.filter((r) => !isSummaryRequest(r));
    expect(chatRequests).toHaveLength(1);
    const [chatRequest] = chatRequests;
    if (!chatRequest) throw new Error("no chat request");
    expect(lastUserTextOf(chatRequest)).toContain(`Question ${TURNS - 1}:`);
    expect(JSON.stringify(chatRequest.messages)).toContain("<conversation-summary>");

    // The regenerated reply is after the watermark: the summary stands.
    const chatAfter = await chatRow(database.db, chatId);
    expect(chatAfter.contextSummary).toBe(chatBefore.contextSummary);
    expect(chatAfter.summaryWatermark).toBe(chatBefore.summaryWatermark);
    expect(chatAfter.compactionDirty).toBe(false);
  });

  it("an edit of the last question after Compact now keeps the compaction's entry, and one before the watermark takes it away with the summary", async () => {
    const database = use();
    const { browser, chatId } = await chatWithHistory(database, "edit-after-compact@example.com");
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const before = await historyOf(database.db, chatId);
    const entry = before.at(-1);
    expect(entry && isTraceEntry(entry)).toBe(true);
    const questions = conversationOf(before).filter((m) => m.role === "user");
    const last = questions.at(-1);
    const first = questions[0];
    if (!last || !first) throw new Error("no questions");
    const summary = (await chatRow(database.db, chatId)).contextSummary;

    const edit = async (id: string, text: string) => {
      fake.reset();
      const response = await postTurn(database, browser, { chatId, modelId: MODEL, text, id });
      expect(response.status).toBe(200);
      await readChunks(response);
      await eventually(async () => !(await isTurnActive(database.db, chatId)));
      return historyOf(database.db, chatId);
    };

    const edited = await edit(last.id, "The last question, asked another way.");
    expect(
      edited
        .slice(-3)
        .map((m) => m.id)
        .slice(0, 2),
    ).toEqual([last.id, entry?.id]);
    expect(edited.at(-1)?.role).toBe("assistant");
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(summary);

    // The first question is under the watermark: the summary is rolled back past that
    // compaction, and its entry goes with the version it belonged to.
    const rewritten = await edit(first.id, "The first question, asked another way.");
    expect(rewritten.some((m) => m.id === entry?.id)).toBe(false);
    expect((await chatRow(database.db, chatId)).summaryWatermark).toBeNull();
  });

  it("Retry on a reply never stored, after Compact now, answers the message after the trace and keeps no version", async () => {
    const database = use();
    const { browser, chatId } = await chatWithHistory(database, "retry-after-compact@example.com");
    fake.script({ fault: "500" }, { fault: "500" }, { fault: "500" });
    const failed = await readChunks(
      await postTurn(database, browser, { chatId, modelId: MODEL, text: "Will this fail?" }),
    );
    const unstoredId = failed.find((c) => c.type === "start")?.messageId as string;
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    const question = (await historyOf(database.db, chatId)).at(-1);
    expect(question?.role).toBe("user");

    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const entry = (await historyOf(database.db, chatId)).at(-1);
    expect(entry && isTraceEntry(entry)).toBe(true);

    fake.reset();
    const retried = await postRegenerate(database, browser, {
      chatId,
      modelId: MODEL,
      messageId: unstoredId,
    });
    expect(retried.status).toBe(200);
    await readChunks(retried);
    await eventually(async () => !(await isTurnActive(database.db, chatId)));

    // The question, the trace of the compaction that ran since, then its answer; nothing moved.
    const tail = (await historyOf(database.db, chatId)).slice(-3);
    expect(tail.map((m) => m.id).slice(0, 2)).toEqual([question?.id, entry?.id]);
    expect(tail[2]?.role).toBe("assistant");
    expect(await branchSlotsOf(database.db, chatId, question?.id ?? "")).toEqual([]);
    const [request] = fake.requests.filter((r) => !isSummaryRequest(r));
    expect(request && lastUserTextOf(request)).toBe("Will this fail?");
  });
});

function regenerate(database: Database, browser: Browser, chatId: string): Promise<Response> {
  return postRegenerate(database, browser, { chatId, modelId: MODEL });
}
