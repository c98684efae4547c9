import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a 4,096-token window; it also answers as the summarizer.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW);
});

import { getLanguageModel } from "@/lib/ai/providers";
import { chatRequestFrame } from "@/lib/ai/request-frame";
import { modelBudget } from "@/lib/chat/budget";
import { type CompactOutcome, compactChat } from "@/lib/chat/compact";
import { SUMMARY_MESSAGE_ID } from "@/lib/compaction/view";
import { type Database, withDatabase } from "@/lib/db/client";
import { markCompactionDirty } from "@/lib/db/compaction-state";
import type { Chat, CompactionEvent, Message } from "@/lib/db/schema";
import { rowToUIMessage } from "@/lib/message/ui-message";
import { applyTurnRequest } from "@/lib/turn/apply-request";
import { register } from "../../helpers/auth";
import {
  chatRow,
  compactNowCall,
  conversationOf,
  eventsOf,
  historyOf,
  isSummaryRequest,
  pinCall,
  scriptedSummary,
} from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import type { Browser } from "../../helpers/http";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";
import { eventually } from "../../helpers/ui-stream";

const MODEL = "fake:small";
const ROUNDS = 10;

afterAll(() => fake.close());
beforeEach(() => fake.reset());

const isSummary = (e: CompactionEvent) => e.outcome === "summarized" || e.outcome === "fallback";

/** Tier 1 as a turn or compact-now runs it, but called directly: no lease. */
async function compactDirectly(
  database: Database,
  chat: Chat,
  rows: readonly Message[],
  force = true,
): Promise<CompactOutcome> {
  const { overheadTokens } = await chatRequestFrame(new Date());
  return withDatabase(database, async () =>
    compactChat(
      { db: database.db, resolveModel: getLanguageModel },
      {
        chat,
        history: rows.map(rowToUIMessage),
        model: await modelBudget(database.db, MODEL),
        overheadTokens,
        force,
      },
    ),
  );
}

async function turns(
  database: Database,
  browser: Browser,
  chatId: string,
  from: number,
  n: number,
) {
  for (let turn = from; turn < from + n; turn++) {
    const { response } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: longMessage(turn),
    });
    expect(response.status).toBe(200);
  }
}

/** Three turns and a manual compaction, then two more turns: a chat with a summary and more after it. */
async function summarizedChat(database: Database, email: string) {
  const { browser } = await register(database, email);
  const chatId = await newChat(database, browser);
  await turns(database, browser, chatId, 0, 3);
  const compacted = await compactNowCall(database, browser, chatId, { modelId: MODEL });
  expect(compacted.status).toBe(200);
  await turns(database, browser, chatId, 3, 2);
  const events = await eventsOf(database.db, chatId);
  expect(events.map((e) => `${e.reason}/${e.outcome}`)).toEqual(["manual/summarized"]);
  return { browser, chatId, first: events[0] as CompactionEvent };
}

function questionRow(rows: readonly Message[], question: number): Message {
  const row = rows.find(
    (m) => m.role === "user" && JSON.stringify(m.parts).includes(`Question ${question}:`),
  );
  if (!row) throw new Error(`no Question ${question}`);
  return row;
}

/** The edit a browser would send, applied as the turn route applies it (the lease left aside). */
function editDirectly(database: Database, chat: Chat, messageId: string, text: string) {
  return applyTurnRequest(database.db, chat, {
    trigger: "submit-message",
    chatId: chat.id,
    message: { id: messageId, role: "user", parts: [{ type: "text", text }] },
  });
}

const ORIGINAL = (question: number) => `Question ${question}: please think about item-${question}`;

describeEachDriver("Compaction races: the CAS on version decides, never a stale summary", (use) => {
  it("a turn and compact-now fired together: the lease serializes them and one summary chain wins", async () => {
    const database = use();
    const { browser } = await register(database, "race@example.com");
    const chatId = await newChat(database, browser);
    await turns(database, browser, chatId, 0, 2);
    const outcomes = { turn409: 0, compact409: 0, both: 0 };

    for (let round = 0; round < ROUNDS; round++) {
      // Every third round the chat starts dirty (an overflow seen earlier): whoever gets
      // the lease first must settle it with a write, never drop it.
      const marked = round % 3 === 2;
      if (marked)
        expect((await markCompactionDirty(database.db, chatId))?.compactionDirty).toBe(true);
      const start = await chatRow(database.db, chatId);
      const eventIds = new Set((await eventsOf(database.db, chatId)).map((e) => e.id));
      const userId = `u-race-${round}-${crypto.randomUUID()}`;

      const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      const [turn, compact] = await Promise.all([
        (async () => {
          if (round % 2 === 1) await delay(round % 4);
          return sendTurn(database, browser, {
            chatId,
            modelId: MODEL,
            text: longMessage(10 + round, 120),
            id: userId,
          });
        })(),
        (async () => {
          if (round % 2 === 0) await delay(round % 4);
          return compactNowCall(database, browser, chatId, { modelId: MODEL });
        })(),
      ]);
      await eventually(async () => !(await isTurnActive(database.db, chatId)));

      const label = `round ${round}`;
      expect([200, 409], label).toContain(turn.response.status);
      expect([200, 409], label).toContain(compact.status);
      // One of them always gets the lease.
      expect(turn.response.status === 409 && compact.status === 409, label).toBe(false);
      if (turn.response.status === 409) outcomes.turn409++;
      else if (compact.status === 409) outcomes.compact409++;
      else outcomes.both++;

      const history = await historyOf(database.db, chatId);
      const stored = history.findIndex((m) => m.id === userId);
      if (turn.response.status === 409) {
        expect(stored, label).toBe(-1);
      } else {
        expect(
          turn.chunks.some((c) => c.type === "error"),
          label,
        ).toBe(false);
        // The turn's question and its reply, stored in order.
        const next = conversationOf(history.slice(stored + 1))[0];
        expect(next?.role, label).toBe("assistant");
      }

      const roundEvents = (await eventsOf(database.db, chatId)).filter((e) => !eventIds.has(e.id));
      const manual = roundEvents.filter((e) => e.reason === "manual");
      if (compact.status === 409) {
        expect(manual, label).toEqual([]);
      } else {
        const body = (await compact.json()) as { trace: { outcome: string } | null };
        expect(
          manual.map((e) => e.outcome),
          label,
        ).toEqual([body.trace?.outcome]);
      }
      // The lease serialized them: no compaction lost a CAS.
      expect(
        roundEvents.filter((e) => e.outcome === "conflict"),
        label,
      ).toEqual([]);

      // Every version step is a write someone recorded: summaries, and the settling of a
      // dirty flag by the first compaction after the mark.
      const end = await chatRow(database.db, chatId);
      const writes = roundEvents.filter(
        (e, i) => isSummary(e) || (marked && i === 0 && e.outcome === "skipped"),
      ).length;
      expect(end.version - start.version, label).toBe(writes);
      if (marked) {
        // The flag was not lost: a compaction ran first and wrote, clearing it.
        expect(roundEvents.length, label).toBeGreaterThan(0);
        expect(writes, label).toBeGreaterThan(0);
      }
      expect(end.compactionDirty, label).toBe(false);
    }

    // One linear chain of summaries: each folds into the one before it, and the chat holds the last.
    const events = await eventsOf(database.db, chatId);
    expect(events.filter((e) => e.outcome === "conflict")).toEqual([]);
    const summaries = events.filter(isSummary);
    expect(summaries.length).toBeGreaterThan(0);
    summaries.forEach((e, i) => {
      expect(e.watermarkFrom).toBe(i === 0 ? null : summaries[i - 1]?.watermarkTo);
    });
    const chat = await chatRow(database.db, chatId);
    const last = summaries.at(-1);
    expect(chat.contextSummary).toBe(last?.summary);
    expect(chat.summaryWatermark).toBe(last?.watermarkTo);
    const history = await historyOf(database.db, chatId);
    expect(history.some((m) => m.id === chat.summaryWatermark)).toBe(true);
    // Nothing the provider was sent overflowed its window.
    expect(fake.requests.filter((r) => r.status !== 200)).toEqual([]);
    expect(outcomes.turn409 + outcomes.compact409 + outcomes.both).toBe(ROUNDS);
    // Whoever found the other holding the lease waited for it (DESIGN §16: a finishing turn is
    // waited for, not refused) — so both were served every round, one after the other, and the
    // checks above (no CAS lost, one linear chain) show the lease serialized them.
    expect(outcomes.both).toBe(ROUNDS);
  });

  it("a fold that loses only to a dirty flag set meanwhile writes its summary and keeps the flag", async () => {
    const database = use();
    const { browser } = await register(database, "flagged@example.com");
    const chatId = await newChat(database, browser);
    await turns(database, browser, chatId, 0, 3);
    const stale = await chatRow(database.db, chatId);
    expect(stale.compactionDirty).toBe(false);
    const rows = await historyOf(database.db, chatId);
    fake.reset();
    fake.script({ fault: "slow", delayMs: 300, text: scriptedSummary("Summary while flagged") });

    const folding = compactDirectly(database, stale, rows);
    // While the summarizer writes, a turn's request overflows and flags the chat (the fold
    // never saw that request, so the flag is not its to clear).
    await eventually(async () => fake.requests.some(isSummaryRequest));
    expect((await markCompactionDirty(database.db, chatId))?.compactionDirty).toBe(true);
    expect((await folding).trace?.outcome).toBe("summarized");

    const chat = await chatRow(database.db, chatId);
    expect(chat.contextSummary).toContain("Summary while flagged");
    expect(chat.compactionDirty).toBe(true);
  });

  it("two compactions of one stale row: exactly one summary is written, the other records a conflict", async () => {
    const database = use();
    const { browser } = await register(database, "twice@example.com");
    const chatId = await newChat(database, browser);
    await turns(database, browser, chatId, 0, 3);
    const stale = await chatRow(database.db, chatId);
    const rows = await historyOf(database.db, chatId);
    fake.reset();
    // Both summarizer calls are in flight together; each answers with its own summary.
    fake.script(
      { fault: "slow", delayMs: 300, text: scriptedSummary("Summary from call ALPHA") },
      { fault: "slow", delayMs: 300, text: scriptedSummary("Summary from call BRAVO") },
    );

    const results = await Promise.all([
      compactDirectly(database, stale, rows),
      compactDirectly(database, stale, rows),
    ]);
    expect(fake.requests.filter(isSummaryRequest)).toHaveLength(2);
    expect(results.map((r) => r.trace?.outcome).sort()).toEqual(["conflict", "summarized"]);

    const chat = await chatRow(database.db, chatId);
    expect(chat.version).toBe(stale.version + 1);
    expect(chat.compactionDirty).toBe(false);
    const events = await eventsOf(database.db, chatId);
    expect(events.map((e) => e.outcome).sort()).toEqual(["conflict", "summarized"]);
    const winner = events.find((e) => e.outcome === "summarized");
    const loser = events.find((e) => e.outcome === "conflict");
    expect(winner?.reason).toBe("manual");
    expect(loser?.reason).toBe("manual");
    // The chat holds the winner's summary; the loser's never landed.
    expect(chat.contextSummary).toBe(winner?.summary);
    expect(chat.summaryWatermark).toBe(winner?.watermarkTo);
    expect(loser?.summary).not.toBe(chat.contextSummary);
    const markers = [winner?.summary, loser?.summary].map(
      (s) => /call (ALPHA|BRAVO)/.exec(s ?? "")?.[1],
    );
    expect(markers.sort()).toEqual(["ALPHA", "BRAVO"]);

    // Both callers go on with the winner's state: its version, and its summary in the view.
    for (const result of results) {
      expect(result.viewVersion).toBe(chat.version);
      const head = result.view[0];
      expect(head?.id).toBe(SUMMARY_MESSAGE_ID);
      expect(JSON.stringify(head?.parts)).toContain(
        `Summary from call ${/call (ALPHA|BRAVO)/.exec(chat.contextSummary ?? "")?.[1]}`,
      );
    }
  });

  it("a fold that loses to one that did not tell an unpinned message still sends that message", async () => {
    const database = use();
    const { browser } = await register(database, "loser-pins@example.com");
    const chatId = await newChat(database, browser);
    const kept = "Keep verbatim: the door code is 4412-ZETA.";
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: kept });
    const [pinned] = await historyOf(database.db, chatId);
    if (!pinned) throw new Error("no message");
    const pinAs = (value: boolean) =>
      pinCall(database, browser, chatId, { messageId: pinned.id, pinned: value });
    expect((await pinAs(true)).status).toBe(200);
    await turns(database, browser, chatId, 0, 3);
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    await turns(database, browser, chatId, 3, 2);
    // Two folds of the same row: one read the message still pinned (it started before the
    // unpin) and wins; the other read it unpinned, told it, and loses.
    const before = await historyOf(database.db, chatId);
    expect((await pinAs(false)).status).toBe(200);
    const stale = await chatRow(database.db, chatId);
    const after = await historyOf(database.db, chatId);
    const won = await compactDirectly(database, stale, before);
    expect(won.trace?.outcome).toBe("summarized");
    const lost = await compactDirectly(database, stale, after);
    expect(lost.trace?.outcome).toBe("conflict");
    // The winner's summary never told it and it is still pending: the loser's view sends it.
    expect(
      (await historyOf(database.db, chatId)).find((m) => m.id === pinned.id)?.metadata,
    ).toMatchObject({
      pinned: true,
      foldPending: true,
    });
    expect(lost.view.map((m) => m.id)).toContain(pinned.id);
  });

  it("a compaction that finishes after an edit before the watermark loses and skips: the rollback stands", async () => {
    const database = use();
    const { browser, chatId, first } = await summarizedChat(database, "stale@example.com");
    const start = await chatRow(database.db, chatId);
    const rows = await historyOf(database.db, chatId);
    fake.reset();
    fake.script({ fault: "slow", delayMs: 800 });

    // A forced compaction starts from the current summary and reads the history as it is now.
    const pending = compactDirectly(database, start, rows);
    await eventually(async () => fake.requests.find(isSummaryRequest));

    // Meanwhile Question 1 — covered by the current summary — is edited.
    const target = questionRow(rows, 1);
    const watermarkIndex = rows.findIndex((m) => m.id === first.watermarkTo);
    expect(rows.indexOf(target)).toBeLessThan(watermarkIndex);
    await editDirectly(database, start, target.id, "Edited Question 1: a different request.");
    const rolledBack = await chatRow(database.db, chatId);
    expect(rolledBack).toMatchObject({
      contextSummary: null,
      summaryWatermark: null,
      compactionDirty: true,
      version: start.version + 1,
    });

    const outcome = await pending;
    expect(outcome.trace?.outcome).toBe("conflict");
    expect(outcome.viewVersion).toBe(rolledBack.version);
    expect(outcome.view.some((m) => m.id === SUMMARY_MESSAGE_ID)).toBe(false);

    // The compaction's CAS lost and it skipped: the rolled-back state, dirty flag included, stands.
    const after = await chatRow(database.db, chatId);
    expect(after).toMatchObject({
      contextSummary: null,
      summaryWatermark: null,
      compactionDirty: true,
      version: rolledBack.version,
    });
    const events = await eventsOf(database.db, chatId);
    expect(events.map((e) => `${e.reason}/${e.outcome}`)).toEqual([
      "manual/summarized",
      "invalidated/skipped",
      "manual/conflict",
    ]);
    const conflict = events[2];
    expect(conflict?.watermarkFrom).toBe(first.watermarkTo);
    expect(conflict?.summary).not.toBe(after.contextSummary);

    // The next turn re-summarizes from the edited history: the old text never comes back.
    fake.reset();
    await turns(database, browser, chatId, 7, 1);
    const settled = await chatRow(database.db, chatId);
    expect(settled.compactionDirty).toBe(false);
    expect(settled.contextSummary ?? "").not.toContain(ORIGINAL(1));
    for (const request of fake.requests) {
      expect(JSON.stringify(request.messages)).not.toContain(ORIGINAL(1));
    }
    expect((await eventsOf(database.db, chatId)).at(-1)?.reason).toBe("invalidated");
  });

  it("a compaction that finishes after an edit inside the span it folds is refused, and the next turn re-summarizes the edited text", async () => {
    const database = use();
    const { browser, chatId, first } = await summarizedChat(database, "between@example.com");
    const start = await chatRow(database.db, chatId);
    const rows = await historyOf(database.db, chatId);
    fake.reset();
    fake.script({ fault: "slow", delayMs: 800 });

    const pending = compactDirectly(database, start, rows);
    const request = await eventually(async () => fake.requests.find(isSummaryRequest));
    // Question 3 comes after the current watermark and is in the span being folded.
    expect(JSON.stringify(request.messages)).toContain(ORIGINAL(3));
    const target = questionRow(rows, 3);
    expect(rows.indexOf(target)).toBeGreaterThan(rows.findIndex((m) => m.id === first.watermarkTo));
    await editDirectly(database, start, target.id, "Edited Question 3: a different request.");

    const outcome = await pending;
    const after = await chatRow(database.db, chatId);
    // The edit bumped the history version: the summary of the pre-edit text is never written.
    expect(outcome.trace?.outcome).toBe("conflict");
    expect(after.contextSummary ?? "").not.toContain(ORIGINAL(3));
    expect(after.historyVersion).toBeGreaterThan(start.historyVersion);

    fake.reset();
    await turns(database, browser, chatId, 7, 1);
    const chatRequest = fake.requests.filter((r) => !isSummaryRequest(r)).at(-1);
    expect(JSON.stringify(chatRequest?.messages)).not.toContain(ORIGINAL(3));
    const settled = await chatRow(database.db, chatId);
    expect(settled.contextSummary ?? "").not.toContain(ORIGINAL(3));
    const settledHistory = await historyOf(database.db, chatId);
    if (settled.summaryWatermark !== null) {
      expect(settledHistory.some((m) => m.id === settled.summaryWatermark)).toBe(true);
    }
  });
});
