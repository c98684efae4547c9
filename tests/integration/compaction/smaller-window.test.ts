import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a large model and a small one; it also answers as the summarizer.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({
    models: [
      { id: "large", maxModelLen: 128_000 },
      { id: "small", maxModelLen: 4_096 },
    ],
    replyTokens: 60,
  });
});

import { countTextTokens } from "@/lib/context/tokens";
import { casCompactionState } from "@/lib/db/compaction-state";
import { register } from "../../helpers/auth";
import {
  chatRow,
  contextOf,
  eventsOf,
  historyOf,
  isSummaryRequest,
} from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { newChat, sendTurn } from "../../helpers/turns";

afterAll(() => fake.close());
beforeEach(() => fake.reset());

/**
 * What a fold on the large model left: a summary of about 2,500 tokens, its goal on one short
 * line, that the small model's window cannot send with the chat (though it can read it to shorten it).
 */
const LARGE_SUMMARY = [
  "## Goal & open requests\n- Migrate the importer to /srv/import (GOAL-MARK)",
  ...[
    "Constraints & preferences",
    "Current state & next step",
    "Decisions & facts",
    "Artifacts & references",
    "Errors & fixes",
  ].map(
    (heading, i) =>
      `## ${heading}\n${Array.from({ length: 30 }, (_, j) => `- OLD-DETAIL-${i}-${j} was resolved long ago, nothing follows from it.`).join("\n")}`,
  ),
].join("\n");

describeEachDriver("a chat moved to a model whose window its summary does not fit", (use) => {
  it("goes on: the summary is shortened on its own, the watermark stays, the turn is answered", async () => {
    const database = use();
    const { db } = database;
    const { browser } = await register(database, "smaller-window@example.com");
    const chatId = await newChat(database, browser);
    for (const text of ["Where do we start?", "And then?"]) {
      const { response } = await sendTurn(database, browser, {
        chatId,
        modelId: "fake:large",
        text,
      });
      expect(response.status).toBe(200);
    }
    const [, firstReply] = await historyOf(db, chatId);
    const before = await chatRow(db, chatId);
    const planted = await casCompactionState(db, chatId, before.version, {
      contextSummary: LARGE_SUMMARY,
      summaryWatermark: firstReply?.id ?? null,
    });
    expect(planted?.won).toBe(true);
    const small = await contextOf(database, browser, chatId, "fake:small");
    // Sent as it is, the chat would not fit the small model: its turn would be refused.
    expect(small.projectedTokens).toBeGreaterThan(small.budget.inputBudget);
    fake.reset();

    const { response, chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: "fake:small",
      text: "What is the next step?",
    });

    expect(response.status).toBe(200);
    expect(chunks.some((chunk) => chunk.type === "text-delta")).toBe(true);
    // One summarizer call shortened the summary; the small model then got the shorter one.
    expect(fake.requests.filter(isSummaryRequest)).toHaveLength(1);
    const sent = fake.requests.filter((r) => !isSummaryRequest(r) && r.model === "small");
    expect(sent).toHaveLength(1);
    const request = JSON.stringify(sent[0]?.messages);
    expect(request).toContain("GOAL-MARK");
    expect(request).not.toContain("OLD-DETAIL");
    // Stored: the shorter summary at the same watermark, and an event that folded no message.
    const chat = await chatRow(db, chatId);
    expect(chat.summaryWatermark).toBe(firstReply?.id);
    expect(chat.contextSummary).toContain("GOAL-MARK");
    expect(countTextTokens(chat.contextSummary ?? "")).toBeLessThan(small.budget.inputBudget / 4);
    const events = await eventsOf(db, chatId);
    expect(events.at(-1)).toMatchObject({
      outcome: "summarized",
      messagesSummarized: 0,
      watermarkFrom: firstReply?.id,
      watermarkTo: firstReply?.id,
    });
  });
});
