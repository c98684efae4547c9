import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a 4,096-token window; it also answers as the summarizer.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, {
    // Compactions happen where each test puts them (in a turn, or compact-now), not after replies.
    COMPACTION_BACKGROUND: "false",
  });
});

import * as chatApi from "@/app/api/chat/route";
import type { Database } from "@/lib/db/client";
import type { CompactionEvent, Message } from "@/lib/db/schema";
import type { RecordedRequest } from "../../fixtures/fake-openai/types";
import { register } from "../../helpers/auth";
import {
  chatRow,
  compactNowCall,
  conversationOf,
  eventsOf,
  historyOf,
  isSummaryRequest,
  lastUserTextOf,
  spanQuestions,
  summarizerPrompt,
} from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";
import { longMessage, newChat, postRegenerate, sendTurn } from "../../helpers/turns";
import { eventually, readChunks } from "../../helpers/ui-stream";

const MODEL = "fake:small";
/** Long enough that the summarizer is still busy when the test looks at the rolled-back row. */
const SLOW_SUMMARIZER_MS = 1_500;

afterAll(() => fake.close());
beforeEach(() => fake.reset());

const isSummary = (e: CompactionEvent) => e.outcome === "summarized" || e.outcome === "fallback";

/** The number in a stored user message's "Question N:" text. */
function questionOf(row: Message | undefined): number {
  const parts = (row?.parts ?? []) as Array<{ type: string; text?: string }>;
  const text = parts.map((p) => p.text ?? "").join("");
  const match = /^Question (\d+):/.exec(text);
  if (!match) throw new Error(`not a question: ${text.slice(0, 40)}`);
  return Number(match[1]);
}

/** Long turns until the chat has `count` automatic summaries. */
async function turnsUntilSummaries(
  database: Database,
  browser: Browser,
  chatId: string,
  count: number,
): Promise<void> {
  for (let turn = 0; turn < 24; turn++) {
    const { response } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: longMessage(turn),
    });
    expect(response.status).toBe(200);
    const events = await eventsOf(database.db, chatId);
    if (events.filter(isSummary).length >= count) {
      expect(events.every((e) => e.reason === "threshold" && isSummary(e))).toBe(true);
      return;
    }
  }
  throw new Error(`no ${count} automatic compactions in 24 turns`);
}

/** Five long turns (under the trigger), then compact now. */
async function manuallyCompacted(database: Database, browser: Browser, chatId: string) {
  for (let turn = 0; turn < 5; turn++) {
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
  }
  expect(await eventsOf(database.db, chatId)).toEqual([]);
  const response = await compactNowCall(database, browser, chatId, { modelId: MODEL });
  expect(response.status).toBe(200);
  const events = await eventsOf(database.db, chatId);
  expect(events.map((e) => `${e.reason}/${e.outcome}`)).toEqual(["manual/summarized"]);
}

/** submit-message with an existing user message's id: an edit. Not awaited to the end. */
function postEdit(
  database: Database,
  browser: Browser,
  chatId: string,
  messageId: string,
  text: string,
): Promise<Response> {
  return call(database, chatApi.POST, {
    path: "/api/chat",
    method: "POST",
    body: {
      trigger: "submit-message",
      chatId,
      modelId: MODEL,
      message: { id: messageId, role: "user", parts: [{ type: "text", text }] },
    },
    browser,
  });
}

async function finish(database: Database, chatId: string, response: Response) {
  expect(response.status).toBe(200);
  const chunks = await readChunks(response);
  expect(chunks.filter((c) => c.type === "error")).toEqual([]);
  await eventually(async () => !(await isTurnActive(database.db, chatId)));
  return chunks;
}

/** The one summarizer request the test expects, once it has been sent. */
async function summarizerRequest(): Promise<RecordedRequest> {
  return eventually(async () => fake.requests.find(isSummaryRequest));
}

const edited = (question: number) => `Edited ${longMessage(question)} Now with a changed mind.`;

describeEachDriver(
  "Invalidation: edits at or before the watermark roll the summary back",
  (use) => {
    for (const how of ["automatic", "manual"] as const) {
      it(`after one ${how} compaction, an edit before its watermark drops the summary, marks the chat dirty, and the turn re-summarizes from the start`, async () => {
        const database = use();
        const { browser } = await register(database, `one-${how}@example.com`);
        const chatId = await newChat(database, browser);
        if (how === "automatic") await turnsUntilSummaries(database, browser, chatId, 1);
        else await manuallyCompacted(database, browser, chatId);

        const before = await chatRow(database.db, chatId);
        const [first] = await eventsOf(database.db, chatId);
        const history = await historyOf(database.db, chatId);
        const watermarkIndex = history.findIndex((m) => m.id === first?.watermarkTo);
        expect(watermarkIndex).toBeGreaterThan(0);
        // The newest user message the summary covers.
        const target = history.slice(0, watermarkIndex + 1).findLast((m) => m.role === "user");
        if (!target) throw new Error("no user message before the watermark");
        const question = questionOf(target);
        fake.reset();
        fake.script({ fault: "slow", delayMs: SLOW_SUMMARIZER_MS });

        const response = await postEdit(database, browser, chatId, target.id, edited(question));
        expect(response.status).toBe(200);

        // While the turn re-summarizes, the row shows the rollback: no summary, dirty.
        const request = await summarizerRequest();
        const rolledBack = await chatRow(database.db, chatId);
        expect(rolledBack).toMatchObject({
          contextSummary: null,
          summaryWatermark: null,
          compactionDirty: true,
          version: before.version + 1,
        });
        const rollback = (await eventsOf(database.db, chatId)).filter(
          (e) => e.reason === "invalidated",
        );
        expect(rollback).toHaveLength(1);
        expect(rollback[0]).toMatchObject({
          outcome: "skipped",
          watermarkFrom: first?.watermarkTo,
          watermarkTo: null,
          summary: null,
        });

        await finish(database, chatId, response);

        // No earlier summary covers anything: the span starts at the first message and stops
        // before the edited one; the old summary is not carried forward.
        const questions = spanQuestions(request);
        expect(questions.length).toBeGreaterThan(0);
        expect(questions[0]).toBe(0);
        expect(questions.every((q) => q < question)).toBe(true);
        expect(summarizerPrompt(request)).not.toContain("<previous-summary>");
        expect(summarizerPrompt(request)).not.toContain("Edited Question");
        expect(fake.requests.filter(isSummaryRequest)).toHaveLength(1);

        // The re-summary is committed from the rolled-back state, and settles the flag.
        const events = await eventsOf(database.db, chatId);
        const resummary = events.at(-1);
        expect(resummary).toMatchObject({
          reason: "invalidated",
          outcome: "summarized",
          watermarkFrom: null,
        });
        const after = await chatRow(database.db, chatId);
        expect(after.contextSummary).toBe(resummary?.summary);
        expect(after.summaryWatermark).toBe(resummary?.watermarkTo);
        expect(after.compactionDirty).toBe(false);
        expect(after.contextSummary).not.toBe(before.contextSummary);

        // The model answered the edited question, with the history after the edit dropped.
        const stored = await historyOf(database.db, chatId);
        const editedRow = stored.find((m) => m.id === target.id);
        expect(JSON.stringify(editedRow?.parts)).toContain("Edited Question");
        expect(stored.indexOf(editedRow as Message)).toBe(stored.length - 2);
        const chatRequest = fake.requests.filter((r) => !isSummaryRequest(r)).at(-1);
        expect(lastUserTextOf(chatRequest as RecordedRequest)).toContain("Edited Question");
      });
    }

    it("with two chained compactions, an edit between the watermarks rolls back to the first summary and re-summarizes only what follows it", async () => {
      const database = use();
      const { browser } = await register(database, "chain@example.com");
      const chatId = await newChat(database, browser);
      await turnsUntilSummaries(database, browser, chatId, 2);

      const before = await chatRow(database.db, chatId);
      const [first, second] = (await eventsOf(database.db, chatId)).filter(isSummary);
      if (!first || !second) throw new Error("expected two summaries");
      expect(second.watermarkFrom).toBe(first.watermarkTo);
      expect(before.contextSummary).toBe(second.summary);
      const history = await historyOf(database.db, chatId);
      const firstIndex = history.findIndex((m) => m.id === first.watermarkTo);
      const secondIndex = history.findIndex((m) => m.id === second.watermarkTo);
      expect(firstIndex).toBeGreaterThan(0);
      expect(secondIndex).toBeGreaterThan(firstIndex);
      // The last question the first summary covers, and the edited one between the watermarks.
      const lastCovered = questionOf(
        history.slice(0, firstIndex + 1).findLast((m) => m.role === "user"),
      );
      const target = history
        .slice(firstIndex + 1, secondIndex + 1)
        .findLast((m) => m.role === "user");
      if (!target) throw new Error("no user message between the watermarks");
      const question = questionOf(target);
      fake.reset();
      fake.script({ fault: "slow", delayMs: SLOW_SUMMARIZER_MS });

      const response = await postEdit(database, browser, chatId, target.id, edited(question));
      expect(response.status).toBe(200);

      // Rolled back to the first summary (its event is the rollback point), dirty.
      const request = await summarizerRequest();
      const rolledBack = await chatRow(database.db, chatId);
      expect(rolledBack).toMatchObject({
        contextSummary: first.summary,
        summaryWatermark: first.watermarkTo,
        compactionDirty: true,
        version: before.version + 1,
      });
      const rollback = (await eventsOf(database.db, chatId)).filter(
        (e) => e.reason === "invalidated",
      );
      expect(rollback).toHaveLength(1);
      expect(rollback[0]).toMatchObject({
        outcome: "skipped",
        watermarkFrom: second.watermarkTo,
        watermarkTo: first.watermarkTo,
        summary: first.summary,
      });

      await finish(database, chatId, response);

      // Only what follows the first watermark is summarized again, folded into the first summary.
      const questions = spanQuestions(request);
      expect(questions.length).toBeGreaterThan(0);
      expect(questions.every((q) => q > lastCovered && q < question)).toBe(true);
      expect(questions[0]).toBe(lastCovered + 1);
      const prompt = summarizerPrompt(request);
      expect(prompt).toContain("<previous-summary>");
      expect(prompt).toContain((first.summary ?? "").trim());
      expect(prompt).not.toContain("Edited Question");
      expect(fake.requests.filter(isSummaryRequest)).toHaveLength(1);

      const events = await eventsOf(database.db, chatId);
      const resummary = events.at(-1);
      expect(resummary).toMatchObject({
        reason: "invalidated",
        outcome: "summarized",
        watermarkFrom: first.watermarkTo,
      });
      const after = await chatRow(database.db, chatId);
      expect(after.contextSummary).toBe(resummary?.summary);
      expect(after.summaryWatermark).toBe(resummary?.watermarkTo);
      expect(after.compactionDirty).toBe(false);
      const stored = await historyOf(database.db, chatId);
      expect(stored.some((m) => m.id === after.summaryWatermark)).toBe(true);
      // The second summary's watermark went with the history after the edit.
      expect(stored.some((m) => m.id === second.watermarkTo)).toBe(false);
    });

    it("an edit after the watermark leaves the summary alone", async () => {
      const database = use();
      const { browser } = await register(database, "after@example.com");
      const chatId = await newChat(database, browser);
      await manuallyCompacted(database, browser, chatId);
      const before = await chatRow(database.db, chatId);
      const eventsBefore = await eventsOf(database.db, chatId);
      const history = await historyOf(database.db, chatId);
      const watermarkIndex = history.findIndex((m) => m.id === before.summaryWatermark);
      const target = conversationOf(history).findLast((m) => m.role === "user");
      if (!target) throw new Error("no user message");
      expect(history.indexOf(target)).toBeGreaterThan(watermarkIndex);
      fake.reset();

      const { response } = await sendTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: edited(questionOf(target)),
        id: target.id,
      });
      expect(response.status).toBe(200);

      const after = await chatRow(database.db, chatId);
      expect(after).toMatchObject({
        contextSummary: before.contextSummary,
        summaryWatermark: before.summaryWatermark,
        compactionDirty: false,
        version: before.version,
      });
      expect(await eventsOf(database.db, chatId)).toEqual(eventsBefore);
      expect(fake.requests.filter(isSummaryRequest)).toEqual([]);
      // The turn still sends the summary, and the edited question after it.
      const chatRequest = fake.requests.at(-1);
      expect(JSON.stringify(chatRequest?.messages)).toContain("<conversation-summary>");
      expect(lastUserTextOf(chatRequest as RecordedRequest)).toContain("Edited Question");
    });

    it("regenerating a reply the summary covers rolls back the same way", async () => {
      const database = use();
      const { browser } = await register(database, "regen@example.com");
      const chatId = await newChat(database, browser);
      await turnsUntilSummaries(database, browser, chatId, 1);
      const before = await chatRow(database.db, chatId);
      const history = await historyOf(database.db, chatId);
      const watermark = history.find((m) => m.id === before.summaryWatermark);
      expect(watermark?.role).toBe("assistant");
      fake.reset();

      const response = await postRegenerate(database, browser, {
        chatId,
        modelId: MODEL,
        messageId: watermark?.id,
      });
      await finish(database, chatId, response);

      const events = await eventsOf(database.db, chatId);
      const rollback = events.find((e) => e.reason === "invalidated" && e.outcome === "skipped");
      expect(rollback).toMatchObject({
        watermarkFrom: before.summaryWatermark,
        watermarkTo: null,
        summary: null,
      });
      const after = await chatRow(database.db, chatId);
      // The old summary is gone; whatever now stands was written after the rollback.
      expect(after.contextSummary).not.toBe(before.contextSummary);
      expect(after.compactionDirty).toBe(false);
      const stored = await historyOf(database.db, chatId);
      expect(stored.some((m) => m.id === watermark?.id)).toBe(false);
      if (after.summaryWatermark !== null) {
        expect(stored.some((m) => m.id === after.summaryWatermark)).toBe(true);
      }
    });
  },
);
