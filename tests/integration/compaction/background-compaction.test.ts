import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a 4,096-token window; it also answers as the summarizer.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, {
    COMPACTION_BACKGROUND: "true",
  });
});

import { eq } from "drizzle-orm";
import * as branchesRoute from "@/app/api/chats/[id]/branches/route";
import * as compactionRoute from "@/app/api/chats/[id]/compaction/route";
import * as contextRoute from "@/app/api/chats/[id]/context/route";
import { getLanguageModel } from "@/lib/ai/providers";
import { chatRequestFrame } from "@/lib/ai/request-frame";
import {
  backgroundCompactionDone,
  loadCompactionInput,
  startBackgroundCompaction,
} from "@/lib/chat/background-compact";
import { modelBudget } from "@/lib/chat/budget";
import { projectChat } from "@/lib/chat/compact";
import { tryHoldCompactionLease } from "@/lib/chat/lease";
import { defaultEstimator } from "@/lib/context/tokens";
import type { Database } from "@/lib/db/client";
import { listCompactionEvents } from "@/lib/db/queries/compaction-events";
import { appendMessage, loadHistory } from "@/lib/db/queries/messages";
import { updateUserRow } from "@/lib/db/queries/users";
import { chat as chatTable, user } from "@/lib/db/schema";
import { liveBus } from "@/lib/live/bus";
import { register } from "../../helpers/auth";
import { compactNowCall, fillUntil } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { compactionSettled, isCompactingNow, isTurnActive } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";
import { longMessage, newChat, postRegenerate, sendTurn } from "../../helpers/turns";
import { readChunks, streamChunks } from "../../helpers/ui-stream";

const MODEL = "fake:small";
/** The summarizer takes this long, so a turn sent meanwhile runs while it writes. */
const SLOW_SUMMARY_MS = 3_000;

afterAll(() => fake.close());
beforeEach(() => fake.reset());

/** Runs `body` while the summarizer takes SLOW_SUMMARY_MS, then makes it quick again. */
async function withSlowSummarizer(body: () => Promise<void>): Promise<void> {
  fake.configure({ summaryDelayMs: SLOW_SUMMARY_MS });
  try {
    await body();
  } finally {
    fake.configure({ summaryDelayMs: 0 });
  }
}

type Chunk = Record<string, unknown>;
const hasTrace = (chunks: readonly Chunk[]) =>
  chunks.some((c) => c.type === "tool-input-available" && c.toolName === "compact_context");

async function contextOf(database: Database, browser: Browser, chatId: string) {
  const response = await call(database, contextRoute.GET, {
    path: `/api/chats/${chatId}/context?modelId=${MODEL}`,
    params: { id: chatId },
    browser,
  });
  return (await response.json()) as {
    compactsNext: boolean;
    compacting: boolean;
    summarizedMessages: number;
  };
}

describeEachDriver("compaction in the background", (use) => {
  it("a version switch waits for a running compaction, so its summary and trace stay with the version it folded, even when its page has gone", async () => {
    const database = use();
    const { browser } = await register(database, "background-switch@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(100) });
    const [asked] = await loadHistory(database.db, chatId);
    if (!asked) throw new Error("no turn");
    // A second version of the first reply, then long turns until a background fold runs.
    const regenerated = await postRegenerate(database, browser, { chatId, modelId: MODEL });
    await readChunks(regenerated);
    await compactionSettled(database.db, chatId);

    await withSlowSummarizer(async () => {
      await fillUntil("due", database, browser, chatId, MODEL);
      // The tab that asked closes while the switch waits: the switch still waits, then happens.
      const closed = AbortSignal.timeout(200);
      const switched = await call(database, branchesRoute.POST, {
        path: `/api/chats/${chatId}/branches`,
        method: "POST",
        params: { id: chatId },
        body: { messageId: asked.id, position: 1 },
        browser,
        signal: closed,
      });
      expect(closed.aborted).toBe(true);
      expect(switched.status).toBe(200);
      // It came back only once the compaction had ended, which then wrote what it folded.
      expect(await isCompactingNow(database.db, chatId)).toBe(false);
    });
    const events = await listCompactionEvents(database.db, chatId);
    expect(events.map((e) => e.outcome)).toEqual(["summarized"]);
    // The version shown now is the first reply alone; the folded one keeps its trace entry.
    const shown = await loadHistory(database.db, chatId);
    expect(shown).toHaveLength(2);
    expect(shown.some((m) => (m.metadata as { compaction?: boolean } | null)?.compaction)).toBe(
      false,
    );
  });

  it("compacts after a reply that crosses the trigger, with no new user turn", async () => {
    const database = use();
    const { browser } = await register(database, "background@example.com");
    const chatId = await newChat(database, browser);

    const turns = await fillUntil("compacted", database, browser, chatId, MODEL);

    const events = await listCompactionEvents(database.db, chatId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ reason: "threshold", outcome: "summarized" });
    // No turn waited for it: none of them carried a compaction trace.
    expect(turns.some(hasTrace)).toBe(false);
    const after = await contextOf(database, browser, chatId);
    expect(after.compactsNext).toBe(false);
    expect(after.compacting).toBe(false);
    // What it folded stays in the timeline as a finished trace entry, after the reply.
    const stored = await loadHistory(database.db, chatId);
    const entry = stored.at(-1);
    expect(entry?.metadata).toMatchObject({ compaction: true });
    expect(JSON.stringify(entry?.parts)).toContain('"outcome":"summarized"');
    expect(after.summarizedMessages).toBeGreaterThan(0);

    // The next turn sends the summary straight away, without compacting first.
    fake.reset();
    const next = await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Thanks!" });
    expect(hasTrace(next.chunks)).toBe(false);
    expect(JSON.stringify(fake.requests.at(-1)?.messages)).toContain("<conversation-summary>");
  });

  it("expects the next turn to add what the chat's turns lately added: one long paste, the chat's opening one too, does not fold the chat after every reply", async () => {
    const database = use();
    const { browser } = await register(database, "one-paste@example.com");
    const model = await modelBudget(database.db, MODEL);
    const { trigger } = model.budget;
    const frame = await chatRequestFrame(new Date());
    const tokens = (text: string) =>
      defaultEstimator.estimateUIMessages(
        [{ id: "x", role: "user", parts: [{ type: "text", text }] }],
        {
          ratio: model.ratio,
        },
      );
    /** Text of about `share` of the trigger. */
    const sized = (share: number, seed: number) => {
      let words = 20;
      while (tokens(longMessage(seed, words)) < share * trigger) words += 20;
      return longMessage(seed, words);
    };
    /** A chat of these user messages, each answered briefly; whether a background fold started. */
    const chatOf = async (asks: readonly string[]) => {
      const chatId = await newChat(database, browser);
      for (const [n, text] of asks.entries()) {
        await appendMessage(database.db, chatId, {
          id: `${chatId}-u${n}`,
          role: "user",
          parts: [{ type: "text", text }],
          metadata: null,
        });
        await appendMessage(database.db, chatId, {
          id: `${chatId}-a${n}`,
          role: "assistant",
          parts: [{ type: "text", text: "Noted." }],
          metadata: null,
        });
      }
      const input = await loadCompactionInput(
        { db: database.db, resolveModel: getLanguageModel },
        chatId,
      );
      if (!input) throw new Error("no chat");
      const { projectedTokens: projected } = projectChat({ ...input, model, ...frame });
      const started = await startBackgroundCompaction(
        { db: database.db, resolveModel: getLanguageModel, live: liveBus() },
        chatId,
        MODEL,
      );
      await compactionSettled(database.db, chatId);
      return { chatId, projected, started };
    };

    // Short questions, then one long paste, answered: the next message as long as that paste
    // would cross the trigger, one as long as the questions would not.
    const question = "Which of these should I read first?";
    const paste = sized(0.4, 1);
    const pasted = await chatOf([question, question, paste]);
    expect(pasted.projected + tokens(paste)).toBeGreaterThanOrEqual(trigger);
    expect(pasted.projected + tokens(question)).toBeLessThan(trigger);
    expect(pasted.started).toBe(false);
    expect(await listCompactionEvents(database.db, pasted.chatId)).toEqual([]);

    // A chat whose turns are all that long is folded ahead of its next one.
    const long = sized(0.3, 2);
    const longTurns = await chatOf([long, long]);
    expect(longTurns.projected).toBeLessThan(trigger);
    expect(longTurns.projected + tokens(long)).toBeGreaterThanOrEqual(trigger);
    expect(longTurns.started).toBe(true);
    const events = await listCompactionEvents(database.db, longTurns.chatId);
    expect(events.map((e) => e.outcome)).toEqual(["summarized"]);

    // A long paste that opens the chat sets it up and is asked about (last: a real turn teaches
    // the model's calibration, which the sizes above were worked out with): not folded after its
    // answer, and the short question that follows is answered with the paste as written.
    const opening = sized(0.55, 3);
    const opened = await chatOf([opening]);
    expect(opened.projected).toBeLessThan(trigger);
    expect(opened.projected + tokens(opening)).toBeGreaterThanOrEqual(trigger);
    expect(opened.started).toBe(false);
    const ring = await contextOf(database, browser, opened.chatId);
    expect(ring.compactsNext).toBe(false);
    fake.reset();
    const asked = await sendTurn(database, browser, {
      chatId: opened.chatId,
      modelId: MODEL,
      text: question,
    });
    expect(asked.response.status).toBe(200);
    expect(hasTrace(asked.chunks)).toBe(false);
    const sent = JSON.stringify(fake.requests.at(-1)?.messages);
    expect(sent).toContain(JSON.stringify(opening).slice(1, -1));
    expect(sent).not.toContain("<conversation-summary>");
    await compactionSettled(database.db, opened.chatId);
    expect(await listCompactionEvents(database.db, opened.chatId)).toEqual([]);
  });

  it("lets a turn that fits run while the summarizer writes, and still commits after it", async () => {
    const database = use();
    const { browser } = await register(database, "meanwhile@example.com");
    const chatId = await newChat(database, browser);
    await withSlowSummarizer(async () => {
      await fillUntil("due", database, browser, chatId, MODEL);
      expect((await contextOf(database, browser, chatId)).compacting).toBe(true);
      // An open page follows the trace live: it is running now.
      const live = await call(database, compactionRoute.GET, {
        path: `/api/chats/${chatId}/compaction`,
        params: { id: chatId },
        browser,
      });
      expect(live.status).toBe(200);
      if (!live.body) throw new Error("the live trace has no body");
      const liveChunks = streamChunks(live.body);

      const meanwhile = await sendTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: "A short question while you tidy up.",
      });
      expect(meanwhile.response.status).toBe(200);
      expect(meanwhile.chunks.some((c) => c.type === "error")).toBe(false);
      expect(hasTrace(meanwhile.chunks)).toBe(false);
      // Its reply is stored before the summary is: it did not wait for the summarizer.
      expect(await listCompactionEvents(database.db, chatId)).toEqual([]);

      // The live trace ran from start to end, then closed.
      const seen: Chunk[] = [];
      for await (const chunk of liveChunks) seen.push(chunk as Chunk);
      expect(hasTrace(seen)).toBe(true);
      const end = seen.find((c) => c.type === "tool-output-available");
      expect(end?.output).toMatchObject({ outcome: "summarized" });
      await compactionSettled(database.db, chatId);
      const events = await listCompactionEvents(database.db, chatId);
      expect(events.map((e) => e.outcome)).toEqual(["summarized"]);
      // Nothing is left to follow once it is done.
      const after = await call(database, compactionRoute.GET, {
        path: `/api/chats/${chatId}/compaction`,
        params: { id: chatId },
        browser,
      });
      expect(after.status).toBe(204);
    });
  });

  it("keeps a background fold when the last reply is regenerated while it writes: what it folded is unchanged", async () => {
    const database = use();
    const { browser } = await register(database, "regen-beside-fold@example.com");
    const chatId = await newChat(database, browser);
    await withSlowSummarizer(async () => {
      await fillUntil("due", database, browser, chatId, MODEL);
      fake.configure({ scriptSummarizer: false });
      try {
        fake.script({ text: "The last reply, again." });
        const again = await postRegenerate(database, browser, { chatId, modelId: MODEL });
        expect(again.status).toBe(200);
        await readChunks(again);
      } finally {
        fake.configure({ scriptSummarizer: true });
      }
      // The reply was regenerated before the summarizer answered.
      expect(await isCompactingNow(database.db, chatId)).toBe(true);
    });
    await compactionSettled(database.db, chatId);
    const events = await listCompactionEvents(database.db, chatId);
    expect(events.map((e) => e.outcome)).toEqual(["summarized"]);
    const [chat] = await database.db.select().from(chatTable).where(eq(chatTable.id, chatId));
    const history = await loadHistory(database.db, chatId);
    expect(history.some((m) => m.id === chat?.summaryWatermark)).toBe(true);
    const lastReply = history.findLast(
      (m) => !(m.metadata as { compaction?: boolean } | null)?.compaction,
    );
    expect(JSON.stringify(lastReply?.parts)).toContain("The last reply, again.");
  });

  it("regenerates a reply whose turn a background compaction's entry landed in", async () => {
    const database = use();
    const { browser } = await register(database, "regen-around-trace@example.com");
    const chatId = await newChat(database, browser);
    await withSlowSummarizer(async () => {
      await fillUntil("due", database, browser, chatId, MODEL);
      // The reply takes longer than the summarizer: the compaction's entry is stored between
      // the message and its reply.
      fake.configure({ scriptSummarizer: false });
      try {
        fake.script({ text: "A slow answer.", delayMs: SLOW_SUMMARY_MS + 1_500 });
        const slow = await sendTurn(database, browser, {
          chatId,
          modelId: MODEL,
          text: "A question answered slowly.",
        });
        expect(slow.response.status).toBe(200);
      } finally {
        fake.configure({ scriptSummarizer: true });
      }
    });
    await compactionSettled(database.db, chatId);
    const roles = (await loadHistory(database.db, chatId)).slice(-3).map((m) => ({
      role: m.role,
      entry: (m.metadata as { compaction?: boolean } | null)?.compaction === true,
    }));
    expect(roles).toEqual([
      { role: "user", entry: false },
      { role: "assistant", entry: true },
      { role: "assistant", entry: false },
    ]);

    fake.configure({ scriptSummarizer: false });
    fake.script({ text: "A second answer." });
    const again = await postRegenerate(database, browser, { chatId, modelId: MODEL });
    expect(again.status).toBe(200);
    await readChunks(again);
    await compactionSettled(database.db, chatId);
    const last = (await loadHistory(database.db, chatId)).at(-1);
    expect(JSON.stringify(last?.parts)).toContain("A second answer.");
    fake.configure({ scriptSummarizer: true });
  });

  it("refuses to regenerate a background fold's entry that follows a reply: it is no reply (400, nothing changed)", async () => {
    const database = use();
    const { browser } = await register(database, "regen-entry@example.com");
    const chatId = await newChat(database, browser);
    await fillUntil("compacted", database, browser, chatId, MODEL);
    await compactionSettled(database.db, chatId);
    const before = await loadHistory(database.db, chatId);
    const isEntry = (m: (typeof before)[number]) =>
      (m.metadata as { compaction?: boolean } | null)?.compaction === true;
    const at = before.findLastIndex((m, i) => isEntry(m) && before[i - 1]?.role === "assistant");
    const entry = before[at];
    if (!entry) throw new Error("no fold entry after a reply");

    const again = await postRegenerate(database, browser, {
      chatId,
      modelId: MODEL,
      messageId: entry.id,
    });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("nothing to regenerate");
    expect((await loadHistory(database.db, chatId)).map((m) => m.id)).toEqual(
      before.map((m) => m.id),
    );
    expect(await isTurnActive(database.db, chatId)).toBe(false);
  });

  it("lets Compact now wait for a running background compaction, then fold on top of it", async () => {
    const database = use();
    const { browser } = await register(database, "compact-now@example.com");
    const chatId = await newChat(database, browser);
    await withSlowSummarizer(async () => {
      await fillUntil("due", database, browser, chatId, MODEL);
      expect(await isCompactingNow(database.db, chatId)).toBe(true);

      const response = await compactNowCall(database, browser, chatId, { modelId: MODEL });
      expect(response.status).toBe(200);
      const { trace } = (await response.json()) as { trace: { outcome: string } | null };
      expect(trace?.outcome).not.toBe("conflict");

      // The background fold landed first; the click built on its summary, losing neither.
      const events = (await listCompactionEvents(database.db, chatId)).reverse();
      expect(events.map((e) => e.outcome)).not.toContain("conflict");
      expect(events[0]).toMatchObject({ reason: "threshold", outcome: "summarized" });
      const manual = events.find((e) => e.reason === "manual");
      expect(manual).toBeDefined();
      if (manual?.outcome === "summarized") {
        expect(manual.watermarkFrom).toBe(events[0]?.watermarkTo);
      }
    });
  });

  it("stops waiting for a running compaction as soon as the waiting turn is stopped", async () => {
    const database = use();
    const { browser } = await register(database, "stop-waiting@example.com");
    const chatId = await newChat(database, browser);
    const lease = await tryHoldCompactionLease(database.db, chatId);
    if (!lease) throw new Error("the compaction lease was not free");
    try {
      const stop = new AbortController();
      const waited = backgroundCompactionDone(database.db, chatId, stop.signal).then(() =>
        Date.now(),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stoppedAt = Date.now();
      stop.abort();
      // The compaction still runs (its lease is held); the waiter is gone all the same.
      expect((await waited) - stoppedAt).toBeLessThan(1_000);
      expect(await isCompactingNow(database.db, chatId)).toBe(true);
    } finally {
      await lease.release();
    }
  });
});

it("does not read the chat after a reply whose counted size is clearly under the trigger", async () => {
  // Whatever it touched would fail and be swallowed (it never throws): record the touch instead.
  const touched: string[] = [];
  const untouchable = new Proxy({} as Database["db"], {
    get(_, property) {
      touched.push(String(property));
      throw new Error("the database was read");
    },
  });
  const started = await startBackgroundCompaction(
    {
      db: untouchable,
      resolveModel: () => {
        touched.push("model");
        throw new Error("a model was resolved");
      },
      live: liveBus(),
    },
    "any-chat",
    MODEL,
    undefined,
    { contextTokens: 1_000, nextMessageTokens: 100, trigger: 3_000 },
  );
  expect(started).toBe(false);
  expect(touched).toEqual([]);
});

describeEachDriver("a background compaction's cost to the chat's owner", (use) => {
  /** A chat whose stored messages put the next turn over the trigger, written without turns. */
  async function dueChat(database: Database, email: string) {
    const { browser } = await register(database, email);
    const chatId = await newChat(database, browser);
    for (let n = 0; n < 8; n++) {
      await appendMessage(database.db, chatId, {
        id: `${email}-${n}`,
        role: n % 2 === 0 ? "user" : "assistant",
        parts: [{ type: "text", text: longMessage(n, 500) }],
        metadata: null,
      });
    }
    const [owner] = await database.db.select().from(user).where(eq(user.email, email));
    if (!owner) throw new Error("no user");
    return { chatId, userId: owner.id };
  }
  const start = (database: Database, chatId: string, tokensLeft: boolean) =>
    startBackgroundCompaction(
      {
        db: database.db,
        resolveModel: getLanguageModel,
        live: liveBus(),
        tokensLeft: async () => tokensLeft,
      },
      chatId,
      MODEL,
    );

  it("is not run once the owner's tokens for the day are spent, nor for a disabled account", async () => {
    const database = use();
    const { chatId, userId } = await dueChat(database, "background-spent@example.com");
    expect(await start(database, chatId, false)).toBe(false);
    expect(await isCompactingNow(database.db, chatId)).toBe(false);
    await updateUserRow(database.db, userId, { status: "disabled" });
    expect(await start(database, chatId, true)).toBe(false);
    expect(await isCompactingNow(database.db, chatId)).toBe(false);
    expect(await listCompactionEvents(database.db, chatId)).toEqual([]);
    // The same chat, its owner active with tokens left: it is due, and it runs.
    await updateUserRow(database.db, userId, { status: "active" });
    expect(await start(database, chatId, true)).toBe(true);
    await compactionSettled(database.db, chatId);
    expect((await listCompactionEvents(database.db, chatId)).length).toBeGreaterThan(0);
  });
});
