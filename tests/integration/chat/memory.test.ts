import { and, eq, like } from "drizzle-orm";
import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a 4,096-token window; it also answers as the summarizer.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, {
    // Compactions happen where this file asks for them, not in the background after a reply.
    COMPACTION_BACKGROUND: "false",
  });
});

import * as notesRoute from "@/app/api/chats/[id]/memory/notes/route";
import * as memoryRoute from "@/app/api/chats/[id]/memory/route";
import { modelBudget } from "@/lib/chat/budget";
import { type ChatMemory, continueInNewChat } from "@/lib/chat/memory";
import { splitSummary } from "@/lib/compaction/ledger";
import { splitUserNotes } from "@/lib/compaction/user-notes";
import type { Database } from "@/lib/db/client";
import { markCompactionDirty } from "@/lib/db/compaction-state";
import { acquireLease, releaseLease } from "@/lib/db/queries/leases";
import { appendMessage, loadHistory } from "@/lib/db/queries/messages";
import { chat } from "@/lib/db/schema";
import { contentText } from "../../fixtures/fake-openai/request";
import type { RecordedRequest } from "../../fixtures/fake-openai/types";
import { register } from "../../helpers/auth";
import {
  chatRow,
  compactNowCall,
  contextOf,
  continueCall,
  eventsOf,
  historyOf,
  isSummaryRequest,
  isTraceEntry,
  pinCall,
  summarizerPrompt,
} from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { whileInsertsRefused } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

const MODEL = "fake:small";

afterAll(() => fake.close());
beforeEach(() => fake.reset());

function memoryOf(database: Database, browser: Browser, chatId: string) {
  return call(database, memoryRoute.GET, {
    path: `/api/chats/${chatId}/memory`,
    params: { id: chatId },
    browser,
  });
}

function putSummary(database: Database, browser: Browser, chatId: string, body: unknown) {
  return call(database, memoryRoute.PUT, {
    path: `/api/chats/${chatId}/memory`,
    method: "PUT",
    body,
    params: { id: chatId },
    browser,
  });
}

function changeNote(
  database: Database,
  browser: Browser,
  chatId: string,
  method: "POST" | "DELETE",
  body: unknown,
) {
  return call(database, method === "POST" ? notesRoute.POST : notesRoute.DELETE, {
    path: `/api/chats/${chatId}/memory/notes`,
    method,
    body,
    params: { id: chatId },
    browser,
  });
}

/** The summary a chat-model request carried, or null. */
function sentSummary(request: RecordedRequest | undefined): string | null {
  const text = (request?.messages ?? []).map(contentText).join("\n");
  const match = /<conversation-summary>\n([\s\S]*?)\n<\/conversation-summary>/.exec(text);
  return match?.[1] ?? null;
}

const lastChatRequest = () => fake.requests.filter((r) => !isSummaryRequest(r)).at(-1);

/** Edits the chat's message `messageId` (a turn with new text); the rollback event it caused. */
async function rolledBackByEditing(
  database: Database,
  browser: Browser,
  chatId: string,
  messageId: string,
) {
  await sendTurn(database, browser, {
    chatId,
    modelId: MODEL,
    text: "First question, edited.",
    id: messageId,
  });
  return (await eventsOf(database.db, chatId)).find((e) => e.reason === "invalidated");
}

/** The chat's first user message after the watermark `from` and at or before `to`. */
async function userMessageBetween(
  database: Database,
  chatId: string,
  from: string | null,
  to: string | null,
) {
  const rows = await historyOf(database.db, chatId);
  const seqOf = (id: string | null) => rows.find((r) => r.id === id)?.seq ?? -1;
  return rows.find((r) => r.role === "user" && r.seq > seqOf(from) && r.seq <= seqOf(to));
}

async function compactedChat(database: Database, browser: Browser): Promise<string> {
  const chatId = await newChat(database, browser);
  for (let turn = 0; turn < 5; turn++) {
    const text = `${longMessage(turn)} The notes are at https://example.com/notes/${turn}.`;
    await sendTurn(database, browser, { chatId, modelId: MODEL, text });
  }
  expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
  expect((await chatRow(database.db, chatId)).contextSummary).toBeTruthy();
  return chatId;
}

describeEachDriver("What the model remembers", (use, driver) => {
  it("saves an edit or a note begun before a change that moved the version but not the summary; refuses one the summary moved under", async () => {
    const database = use();
    const { browser } = await register(database, "flag-bump@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "hello there" });
    const first = await changeNote(database, browser, chatId, "POST", {
      note: "Budget: 300 euros.",
      version: (await chatRow(database.db, chatId)).version,
    });
    expect(first.status).toBe(200);
    const opened = ((await first.json()) as { memory: ChatMemory }).memory;
    // A turn's overflow recovery flags the chat for compaction: the version moves, the summary
    // does not.
    await markCompactionDirty(database.db, chatId);
    expect((await chatRow(database.db, chatId)).version).toBeGreaterThan(opened.version);
    const from = opened.summary ?? "";
    const edited = await putSummary(database, browser, chatId, {
      summary: `${from}\n- Also: blue.`,
      version: opened.version,
      from,
    });
    expect(edited.status).toBe(200);
    const saved = ((await edited.json()) as { memory: ChatMemory }).memory;
    expect(saved.notes).toEqual(["- Budget: 300 euros.", "- Also: blue."]);
    // The same tab's note, still naming what it opened: the summary did move (its own edit).
    const stale = await changeNote(database, browser, chatId, "POST", {
      note: "Codename: BLUEBIRD.",
      version: opened.version,
      from,
    });
    expect(stale.status).toBe(409);
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(saved.summary);
  });

  it("shows the summary and its ledger, and a summary the user edits is what the next request carries", async () => {
    const database = use();
    const { browser } = await register(database, "memory@example.com");
    const chatId = await compactedChat(database, browser);
    const row = await chatRow(database.db, chatId);

    const shown = (await (await memoryOf(database, browser, chatId)).json()) as {
      memory: ChatMemory;
    };
    expect(shown.memory.summary).toBe(row.contextSummary);
    expect(shown.memory.watermark).toBe(row.summaryWatermark);
    expect(shown.memory.version).toBe(row.version);
    expect(shown.memory.ledger.length).toBeGreaterThan(0);
    expect(shown.memory.narrative).not.toContain("Verbatim references");

    const mine = "## Goal & open requests\n- The user's own words: plan the trip to Lisbon in May.";
    const stale = row.version - 1;
    expect(
      (await putSummary(database, browser, chatId, { summary: mine, version: stale })).status,
    ).toBe(409);
    for (const body of [
      {},
      { summary: "", version: row.version },
      { summary: mine },
      { summary: 3, version: 1 },
      // Past what the version column holds: refused, not a database error.
      { summary: mine, version: 2 ** 31 },
    ]) {
      expect((await putSummary(database, browser, chatId, body)).status).toBe(400);
    }
    const { browser: stranger } = await register(database, "memory-stranger@example.com");
    expect((await memoryOf(database, stranger, chatId)).status).toBe(404);
    expect(
      (await putSummary(database, stranger, chatId, { summary: mine, version: row.version }))
        .status,
    ).toBe(404);
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(row.contextSummary);

    const saved = await putSummary(database, browser, chatId, {
      summary: mine,
      version: row.version,
    });
    expect(saved.status).toBe(200);
    const savedJson = (await saved.json()) as { memory: ChatMemory; message: { parts: unknown[] } };
    expect(savedJson.memory.summary).toBe(mine);
    expect(JSON.stringify(savedJson.message.parts)).toContain("edited by user");
    const after = await chatRow(database.db, chatId);
    expect(after.contextSummary).toBe(mine);
    expect(after.version).toBe(row.version + 1);
    expect((await eventsOf(database.db, chatId)).at(-1)).toMatchObject({
      reason: "edited",
      outcome: "summarized",
      summary: mine,
      watermarkTo: row.summaryWatermark,
      error: "edited by user",
    });

    fake.reset();
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "What was the plan?" });
    expect(sentSummary(lastChatRequest())).toBe(mine);
  });

  it("a pinned message survives a compaction verbatim, counts in the ring's breakdown, and once unpinned is told by a fold, again after a rollback past it, never twice by one summary", async () => {
    const database = use();
    const { browser } = await register(database, "pins@example.com");
    const chatId = await newChat(database, browser);
    const pinnedText = `Remember exactly: the deploy key is fold-7Q2-ZZ9 and the port is 8443. ${longMessage(99, 60)}`;
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: pinnedText });
    const [pinnedRow] = await historyOf(database.db, chatId);
    if (!pinnedRow) throw new Error("no message");
    expect(
      (await pinCall(database, browser, chatId, { messageId: pinnedRow.id, pinned: "yes" })).status,
    ).toBe(400);
    expect(
      (await pinCall(database, browser, chatId, { messageId: "missing", pinned: true })).status,
    ).toBe(404);
    const { browser: stranger } = await register(database, "pins-stranger@example.com");
    expect(
      (await pinCall(database, stranger, chatId, { messageId: pinnedRow.id, pinned: true })).status,
    ).toBe(404);
    const pinned = await pinCall(database, browser, chatId, {
      messageId: pinnedRow.id,
      pinned: true,
    });
    expect(pinned.status).toBe(200);
    expect(((await pinned.json()) as { memory: ChatMemory }).memory.pinnedIds).toEqual([
      pinnedRow.id,
    ]);

    // Long turns until an automatic compaction folds past the pinned message.
    let folded = false;
    for (let turn = 0; turn < 24 && !folded; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
      folded = (await chatRow(database.db, chatId)).summaryWatermark !== null;
    }
    expect(folded).toBe(true);
    const summaries = fake.requests.filter(isSummaryRequest);
    expect(summaries.length).toBeGreaterThan(0);
    // The summarizer never gets the pinned message itself (replies may quote it).
    for (const request of summaries) {
      expect(summarizerPrompt(request)).not.toContain("<user>\nRemember exactly");
    }

    fake.reset();
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "What is the deploy key?" });
    const request = lastChatRequest();
    expect(sentSummary(request)).not.toBeNull();
    const verbatim = request?.messages.filter((m) => contentText(m) === pinnedText) ?? [];
    expect(verbatim).toHaveLength(1);
    expect(verbatim[0]?.role).toBe("user");
    const context = (await contextOf(database, browser, chatId, MODEL)) as unknown as {
      breakdown: { pinned: number };
      summarizedMessages: number;
    };
    expect(context.breakdown.pinned).toBeGreaterThan(0);
    // The ring's "N older messages are in the summary": all up to the watermark, though the
    // pinned first message is read apart from the rest.
    const stored = await historyOf(database.db, chatId);
    const watermark = (await chatRow(database.db, chatId)).summaryWatermark;
    expect(context.summarizedMessages).toBe(stored.findIndex((row) => row.id === watermark) + 1);
    expect(context.summarizedMessages).toBeGreaterThan(2);

    // Unpinned: no summary tells it yet, so the model still reads it verbatim, and the
    // memory panel no longer lists it as pinned.
    const unpinned = await pinCall(database, browser, chatId, {
      messageId: pinnedRow.id,
      pinned: false,
    });
    expect(((await unpinned.json()) as { memory: ChatMemory }).memory.pinnedIds).toEqual([]);
    fake.reset();
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "And now?" });
    expect(lastChatRequest()?.messages.filter((m) => contentText(m) === pinnedText)).toHaveLength(
      1,
    );
    // The ring no longer counts it as pinned: it is one of the messages until it is folded.
    const afterUnpin = (await contextOf(database, browser, chatId, MODEL)) as unknown as {
      breakdown: { pinned: number };
    };
    expect(afterUnpin.breakdown.pinned).toBe(0);

    // The next compaction tells it; after that the summary carries it, not the message.
    const untold = (await chatRow(database.db, chatId)).summaryWatermark;
    fake.reset();
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const [told] = fake.requests.filter(isSummaryRequest);
    expect(told && summarizerPrompt(told)).toContain("<user>\nRemember exactly");
    const [row] = await historyOf(database.db, chatId);
    expect(row?.metadata).not.toHaveProperty("pinned");
    expect(row?.metadata).not.toHaveProperty("foldPending");
    fake.reset();
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "And after that?" });
    expect(lastChatRequest()?.messages.some((m) => contentText(m) === pinnedText)).toBe(false);

    // An edit between the two summaries rolls back to the first, which never told it: it is
    // pending again, so the next fold tells it once more.
    const told2 = (await chatRow(database.db, chatId)).summaryWatermark;
    const rows = await historyOf(database.db, chatId);
    const seqOf = (id: string | null) => rows.find((r) => r.id === id)?.seq ?? -1;
    const between = rows.find(
      (r) => r.role === "user" && r.seq > seqOf(untold) && r.seq <= seqOf(told2),
    );
    if (!between) throw new Error("no user message between the two summaries' watermarks");
    fake.reset();
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Edited", id: between.id });
    // The rolled-back chat is dirty, so that turn folds again: the summarizer is told it now.
    const refolds = fake.requests.filter(isSummaryRequest);
    expect(refolds.some((r) => summarizerPrompt(r).includes("<user>\nRemember exactly"))).toBe(
      true,
    );

    // Told again by that fold; a later one folds further. An edit between the two rolls back to
    // the summary that told it: it stays told, and no fold is told it a third time.
    const retold = (await chatRow(database.db, chatId)).summaryWatermark;
    for (let turn = 0; turn < 3; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(50 + turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const further = (await chatRow(database.db, chatId)).summaryWatermark;
    const later = await userMessageBetween(database, chatId, retold, further);
    if (!later) throw new Error("no user message between the two summaries' watermarks");
    fake.reset();
    await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Edited again",
      id: later.id,
    });
    expect((await chatRow(database.db, chatId)).summaryWatermark).not.toBe(further);
    const [first] = await historyOf(database.db, chatId);
    expect(first?.metadata).not.toHaveProperty("foldPending");
    expect(
      fake.requests
        .filter(isSummaryRequest)
        .some((r) => summarizerPrompt(r).includes("<user>\nRemember exactly")),
    ).toBe(false);
    expect(lastChatRequest()?.messages.some((m) => contentText(m) === pinnedText)).toBe(false);
  });

  it("a pinned message too long for a fold to reach the target moves where the chat folds, and the ring shows it", async () => {
    const database = use();
    const { browser } = await register(database, "pinned-long@example.com");
    const chatId = await newChat(database, browser);
    // The budget the product gives this model (its window as the server reports it).
    const { budget } = await modelBudget(database.db, MODEL);
    // Long enough that Fold's frame, a full summary and this message are over the target.
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(99, 900) });
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Thanks. And then?" });
    const [pinnedRow] = await historyOf(database.db, chatId);
    if (!pinnedRow) throw new Error("no message");
    type Ring = {
      projectedTokens: number;
      compactsNext: boolean;
      budget: { trigger: number; triggerRaised: boolean };
    };
    const ring = async () => (await contextOf(database, browser, chatId, MODEL)) as unknown as Ring;
    // Not pinned, a fold takes it into the summary: the budget's own trigger.
    expect((await ring()).budget).toMatchObject({ trigger: budget.trigger, triggerRaised: false });

    await pinCall(database, browser, chatId, { messageId: pinnedRow.id, pinned: true });
    const { trigger: raised, triggerRaised } = (await ring()).budget;
    expect(triggerRaised).toBe(true);
    expect(raised).toBeGreaterThan(budget.trigger);
    expect(raised).toBeLessThanOrEqual(budget.inputBudget);

    // Short turns until a fold: it comes where the ring said, not at the budget's trigger.
    let before: Ring = await ring();
    for (let turn = 0; turn < 30; turn++) {
      const { chunks } = await sendTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: `Short question ${turn}?`,
      });
      const start = chunks.find(
        (c) => c.type === "tool-input-available" && c.toolName === "compact_context",
      );
      const trace = chunks.find(
        (c) => c.type === "tool-output-available" && c.toolCallId === start?.toolCallId,
      ) as { output: { tokensBefore: number } } | undefined;
      if (trace) {
        expect(trace.output.tokensBefore).toBeGreaterThanOrEqual(before.budget.trigger);
        expect(before.budget.trigger).toBeGreaterThan(budget.trigger);
        return;
      }
      before = await ring();
      // Past the budget's trigger and under the chat's, the ring says no fold is due.
      if (
        before.projectedTokens >= budget.trigger &&
        before.projectedTokens < before.budget.trigger
      )
        expect(before.compactsNext).toBe(false);
    }
    throw new Error("the chat never folded");
  });

  it("lists the pinned messages in chat order by how their text begins, cut to one line", async () => {
    const database = use();
    const { browser } = await register(database, "pin-list@example.com");
    const chatId = await newChat(database, browser);
    const long = `Keep   this:\n\nthe launch is on 3 June. ${"More words follow here. ".repeat(20)}`;
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: long });
    // A hundred characters, two UTF-16 units each: not one past the limit.
    const emoji = "🙂".repeat(100);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: emoji });
    const [first, reply, third] = await historyOf(database.db, chatId);
    if (!first || !reply || !third) throw new Error("no messages");
    // Pinned newest first: the list still follows the chat.
    for (const row of [third, reply, first]) {
      await pinCall(database, browser, chatId, { messageId: row.id, pinned: true });
    }
    const { memory } = (await (await memoryOf(database, browser, chatId)).json()) as {
      memory: ChatMemory;
    };
    expect(memory.pins.map((pin) => [pin.id, pin.role])).toEqual([
      [first.id, "user"],
      [reply.id, "assistant"],
      [third.id, "user"],
    ]);
    expect(memory.pins[2]?.excerpt).toBe(emoji);
    const excerpt = memory.pins[0]?.excerpt ?? "";
    expect(excerpt.startsWith("Keep this: the launch is on 3 June. More words")).toBe(true);
    expect(excerpt.endsWith("…")).toBe(true);
    expect(excerpt.length).toBeLessThanOrEqual(160);
    expect(memory.pins[1]?.excerpt.length).toBeGreaterThan(0);
  });

  it("cuts a pinned message's excerpt between whole emoji, never inside a family or a flag", async () => {
    const database = use();
    const { browser } = await register(database, "pin-emoji@example.com");
    const chatId = await newChat(database, browser);
    // A family is seven code points (four people joined by three ZWJs), a flag two: the limit
    // (160, less one for the ellipsis) falls inside the family.
    const family = "👨‍👩‍👧‍👦";
    const text = `${"a".repeat(155)} ${family} 🇫🇷 tail`;
    await sendTurn(database, browser, { chatId, modelId: MODEL, text });
    const [first] = await historyOf(database.db, chatId);
    if (!first) throw new Error("no message");
    await pinCall(database, browser, chatId, { messageId: first.id, pinned: true });
    const { memory } = (await (await memoryOf(database, browser, chatId)).json()) as {
      memory: ChatMemory;
    };
    expect(memory.pins[0]?.excerpt).toBe(`${"a".repeat(155)}…`);
  });

  it("says a pinned message goes on past its excerpt when it starts with blank lines or holds one grapheme past the limit", async () => {
    const database = use();
    const { browser } = await register(database, "pin-edges@example.com");
    const chatId = await newChat(database, browser);
    // Whitespace first: the excerpt is cut after it, and still ends in an ellipsis.
    const indented = `\n\n   ${"x".repeat(160)} and more`;
    // One letter with 200 accents is one grapheme: cut in code points rather than shown as "…".
    const accented = `a${"\u0301".repeat(200)}`;
    for (const text of [indented, accented]) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text });
    }
    const users = (await historyOf(database.db, chatId)).filter((row) => row.role === "user");
    for (const row of users) {
      await pinCall(database, browser, chatId, { messageId: row.id, pinned: true });
    }
    const { memory } = (await (await memoryOf(database, browser, chatId)).json()) as {
      memory: ChatMemory;
    };
    expect(memory.pins.map((pin) => pin.excerpt)).toEqual([
      `${"x".repeat(159)}…`,
      `a${"\u0301".repeat(158)}…`,
    ]);
  });

  it("continue in a new chat starts a chat whose context begins with the summary and ledger", async () => {
    const database = use();
    const { browser } = await register(database, "handoff@example.com");
    const chatId = await compactedChat(database, browser);
    const source = await chatRow(database.db, chatId);

    const empty = await newChat(database, browser);
    expect((await continueCall(database, browser, empty)).status).toBe(409);
    const { browser: stranger } = await register(database, "handoff-stranger@example.com");
    expect((await continueCall(database, stranger, chatId)).status).toBe(404);

    const response = await continueCall(database, browser, chatId);
    expect(response.status).toBe(201);
    const { chat } = (await response.json()) as {
      chat: { id: string; title: string; modelId: string };
    };
    expect(chat.id).not.toBe(chatId);
    expect(chat.modelId).toBe(MODEL);
    // Marked where a list that cuts long titles short still shows it.
    expect(chat.title).toBe(`Continued: ${source.title}`);
    const memory = (
      (await (await memoryOf(database, browser, chat.id)).json()) as { memory: ChatMemory }
    ).memory;
    // The same summary, its values placed before the new chat's first message: the new chat's
    // own values must not be the first the ledger evicts.
    const before = splitSummary(source.contextSummary);
    expect(memory.narrative).toBe(before.narrative);
    expect(memory.ledger.map((e) => e.value).sort()).toEqual(
      before.ledger.map((e) => e.value).sort(),
    );
    expect(memory.ledger.length).toBeGreaterThan(0);
    expect(memory.ledger.every((e) => e.first === 0 && e.last === 0)).toBe(true);
    expect(memory.watermark).toBeNull();
    expect((await eventsOf(database.db, chat.id)).map((e) => e.reason)).toEqual(["handoff"]);

    fake.reset();
    await sendTurn(database, browser, { chatId: chat.id, modelId: MODEL, text: "Where were we?" });
    const request = lastChatRequest();
    expect(sentSummary(request)).toBe(memory.summary?.trim());
    expect(contentText(request?.messages.at(-1) ?? { role: "user", content: "" })).toBe(
      "Where were we?",
    );
    // The source chat is unchanged.
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(source.contextSummary);
  });

  it("continue in a new chat waits for a reply still streaming, and says so when it goes on (409)", async () => {
    const database = use();
    const { browser } = await register(database, "handoff-busy@example.com");
    const chatId = await compactedChat(database, browser);
    const lease = await acquireLease(database.db, chatId, 60_000);
    if (!lease) throw new Error("no lease");
    const busy = await continueCall(database, browser, chatId);
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: { message: string } }).error.message).toMatch(
      /reply is streaming/,
    );
    // No chat was started from it.
    const { userId } = await chatRow(database.db, chatId);
    const continued = () =>
      database.db
        .select({ id: chat.id })
        .from(chat)
        .where(and(eq(chat.userId, userId), like(chat.title, "Continued:%")));
    expect(await continued()).toEqual([]);
    await releaseLease(database.db, lease);
    expect((await continueCall(database, browser, chatId)).status).toBe(201);
    expect(await continued()).toHaveLength(1);
  });

  it("continue in a new chat of a chat deleted meanwhile answers that it was deleted, and starts nothing", async () => {
    const database = use();
    const { browser } = await register(database, "handoff-deleted@example.com");
    const chatId = await compactedChat(database, browser);
    const source = await chatRow(database.db, chatId);
    // The chat is deleted after the route found it and this took its lease: just before the
    // hand-off reads its summary.
    const db = database.db;
    const racing = new Proxy(db, {
      get(target, key, receiver) {
        if (key !== "transaction") return Reflect.get(target, key, receiver);
        return async (...args: Parameters<typeof db.transaction>) => {
          await db.delete(chat).where(eq(chat.id, chatId));
          return target.transaction(...args);
        };
      },
    });
    await expect(continueInNewChat(racing, source.userId, source)).rejects.toMatchObject({
      code: "not_found:chat",
    });
    const started = await db
      .select({ id: chat.id })
      .from(chat)
      .where(and(eq(chat.userId, source.userId), like(chat.title, "Continued:%")));
    expect(started).toEqual([]);
  });

  it("continue in a new chat leaves behind the traces of folds that ran inside the old chat's replies", async () => {
    const database = use();
    const { browser } = await register(database, "handoff-traces@example.com");
    const chatId = await compactedChat(database, browser);
    // A reply after the watermark that folded older messages during its turn.
    await appendMessage(database.db, chatId, {
      id: "a-with-trace",
      role: "assistant",
      parts: [
        {
          type: "tool-compact_context",
          toolCallId: "trace-1",
          state: "output-available",
          input: { reason: "threshold" },
          output: { outcome: "summarized", summary: "the old chat's summary" },
        },
        { type: "text", text: "The answer after the fold." },
      ],
      metadata: null,
    });
    const response = await continueCall(database, browser, chatId);
    expect(response.status).toBe(201);
    const { chat: created } = (await response.json()) as { chat: { id: string } };
    const copied = await loadHistory(database.db, created.id);
    const parts = copied.flatMap((row) => row.parts as Array<{ type: string; text?: string }>);
    expect(parts.some((part) => part.text === "The answer after the fold.")).toBe(true);
    expect(parts.map((part) => part.type)).not.toContain("tool-compact_context");
  });

  it("an edit in a continued chat rolls back to the user's own edit of the summary it started from", async () => {
    const database = use();
    const { browser } = await register(database, "handoff-edit@example.com");
    const source = await compactedChat(database, browser);
    const created = await continueCall(database, browser, source);
    const chatId = ((await created.json()) as { chat: { id: string } }).chat.id;
    const mine =
      "## Decisions & facts\n- The user's correction: the meeting is on Thursday, not Friday.";
    const { version } = await chatRow(database.db, chatId);
    expect((await putSummary(database, browser, chatId, { summary: mine, version })).status).toBe(
      200,
    );
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "First question here." });
    // After the edit's entry in the timeline.
    const first = (await historyOf(database.db, chatId)).find((m) => m.role === "user");
    if (!first) throw new Error("no message");
    for (let turn = 0; turn < 4; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    expect((await chatRow(database.db, chatId)).summaryWatermark).toBeTruthy();

    // Editing the first message rolls back past every fold: to the summary as the user left it.
    const rollback = await rolledBackByEditing(database, browser, chatId, first.id);
    expect(rollback?.summary).toBe(mine);
  });

  it.runIf(driver === "pg")(
    "a pin that finds its message deleted meanwhile (a version switch) answers 404, not a pin that never lands",
    async () => {
      const database = use();
      if (database.driver !== "pg") throw new Error("pg only");
      const { browser } = await register(database, "pin-race@example.com");
      const chatId = await newChat(database, browser);
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Pin me." });
      const [row] = await historyOf(database.db, chatId);
      if (!row) throw new Error("no message");
      // Another request deletes the message and has not committed yet: the pin reads it, then
      // waits on its lock, and finds it gone.
      const other = await database.pool.connect();
      try {
        await other.query("begin");
        await other.query("delete from message where id = $1", [row.id]);
        const pinning = pinCall(database, browser, chatId, { messageId: row.id, pinned: true });
        await new Promise((resolve) => setTimeout(resolve, 300));
        await other.query("commit");
        expect((await pinning).status).toBe(404);
      } finally {
        other.release();
      }
    },
  );

  it.runIf(driver === "pg")(
    "a pin sent while a version switch holds the chat waits for it, and answers 404 once its message is gone",
    async () => {
      const database = use();
      if (database.driver !== "pg") throw new Error("pg only");
      const { browser } = await register(database, "pin-switch@example.com");
      const chatId = await newChat(database, browser);
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Pin me." });
      const [row] = await historyOf(database.db, chatId);
      if (!row) throw new Error("no message");
      // A switch (or an edit, a regenerate) takes the chat's row, reads the messages it will
      // archive, and only then deletes them: a pin committed in between would be archived as
      // unpinned while it answered 200.
      const other = await database.pool.connect();
      try {
        await other.query("begin");
        await other.query("select id from chat where id = $1 for update", [chatId]);
        await other.query("select id, metadata from message where chat_id = $1", [chatId]);
        const pinning = pinCall(database, browser, chatId, { messageId: row.id, pinned: true });
        await new Promise((resolve) => setTimeout(resolve, 300));
        await other.query("delete from message where id = $1", [row.id]);
        await other.query("commit");
        expect((await pinning).status).toBe(404);
      } finally {
        other.release();
      }
    },
  );

  it("a rollback past the user's edit of the summary keeps the lines they wrote, and the model is sent them", async () => {
    const database = use();
    const { browser } = await register(database, "rollback-notes@example.com");
    const chatId = await compactedChat(database, browser);
    const { contextSummary, version } = await chatRow(database.db, chatId);
    const note = "- The user's own note: the project's codename is BLUEBIRD.";
    const mine = `${contextSummary}\n${note}`;
    expect((await putSummary(database, browser, chatId, { summary: mine, version })).status).toBe(
      200,
    );

    // Editing the first message rolls back past every summary, the user's edit with them.
    const [first] = await historyOf(database.db, chatId);
    if (!first) throw new Error("no message");
    fake.reset();
    const rollback = await rolledBackByEditing(database, browser, chatId, first.id);
    expect(rollback?.summary).toBe(`## Notes you added\n${note}`);
    expect(rollback?.error).toContain("kept 1 line(s) you wrote");
    // Only the line the user wrote: none of the summary it was written into.
    expect(rollback?.summary).not.toContain(contextSummary?.split("\n")[1] ?? "");
    // The turn that edited it already sends the model the note.
    expect(sentSummary(lastChatRequest())).toBe(`## Notes you added\n${note}`);
  });

  it("lines the user kept through a rollback stay through the next one; a line they corrected in a later edit does not come back", async () => {
    const database = use();
    const { browser } = await register(database, "rollback-notes-twice@example.com");
    const chatId = await compactedChat(database, browser);
    const early = (await historyOf(database.db, chatId)).find((m) => m.role === "user");
    for (let turn = 5; turn < 10; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    const firstFold = (await chatRow(database.db, chatId)).summaryWatermark;
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const folded = await chatRow(database.db, chatId);
    expect(folded.summaryWatermark).not.toBe(firstFold);
    // Two edits: the second corrects a line the first added.
    const first = `${folded.contextSummary}\n- Budget: 500 euros.\n- Codename: BLUEBIRD.`;
    expect(
      (await putSummary(database, browser, chatId, { summary: first, version: folded.version }))
        .status,
    ).toBe(200);
    const second = `${folded.contextSummary}\n- Budget: 300 euros.\n- Codename: BLUEBIRD.`;
    expect(
      (
        await putSummary(database, browser, chatId, {
          summary: second,
          version: folded.version + 1,
        })
      ).status,
    ).toBe(200);

    // An edit between the two folds rolls back to the first one, the user's lines after it.
    const between = await userMessageBetween(database, chatId, firstFold, folded.summaryWatermark);
    if (!between || !early) throw new Error("no user messages to edit");
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Edited", id: between.id });
    const notes = "## Notes you added\n- Budget: 300 euros.\n- Codename: BLUEBIRD.";
    const rolledBack = await chatRow(database.db, chatId);
    expect(rolledBack.summaryWatermark).toBe(firstFold);
    expect(rolledBack.contextSummary?.endsWith(notes)).toBe(true);
    expect(rolledBack.contextSummary).not.toContain("500 euros");
    const shown = (await (await memoryOf(database, browser, chatId)).json()) as {
      memory: ChatMemory;
    };
    // Listed on their own, not as part of the narrative.
    expect(shown.memory.notes).toEqual(["- Budget: 300 euros.", "- Codename: BLUEBIRD."]);
    expect(shown.memory.narrative).not.toContain("BLUEBIRD");
    expect(shown.memory.ledger.length).toBeGreaterThan(0);

    // An edit before the first fold rolls back past every summary: the notes still stay.
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Edited", id: early.id });
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(notes);
  });

  it("a line the user wrote stays through a rollback after a fold carried it into the next summary", async () => {
    const database = use();
    const { browser } = await register(database, "rollback-notes-fold@example.com");
    const chatId = await compactedChat(database, browser);
    const early = (await historyOf(database.db, chatId)).find((m) => m.role === "user");
    if (!early) throw new Error("no message");
    // The user adds a goal; the next fold carries it on as one of the summary's goals.
    const budget = "- Budget: 500 euros.";
    const before = await chatRow(database.db, chatId);
    const withBudget = (before.contextSummary ?? "").replace(
      /(## Goal & open requests\n(?:- .*\n)*)/,
      `$1${budget}\n`,
    );
    expect(withBudget).toContain(budget);
    expect(
      (
        await putSummary(database, browser, chatId, {
          summary: withBudget,
          version: before.version,
        })
      ).status,
    ).toBe(200);
    for (let turn = 5; turn < 10; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const folded = await chatRow(database.db, chatId);
    expect(folded.contextSummary).toContain(budget);
    // A second edit, of the summary Fold wrote since.
    const codename = "- Codename: BLUEBIRD.";
    expect(
      (
        await putSummary(database, browser, chatId, {
          summary: `${folded.contextSummary}\n${codename}`,
          version: folded.version,
        })
      ).status,
    ).toBe(200);

    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Edited", id: early.id });
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(
      `## Notes you added\n${budget}\n${codename}`,
    );
  });

  it("notes a rollback kept pass word for word through the next fold (the summarizer never rewrites them) and through a rollback past it", async () => {
    const database = use();
    const { browser } = await register(database, "rollback-notes-refold@example.com");
    const chatId = await compactedChat(database, browser);
    const { contextSummary, version } = await chatRow(database.db, chatId);
    const note = "- Never book flights through Frankfurt; codename BLUEBIRD.";
    expect(
      (
        await putSummary(database, browser, chatId, {
          summary: `${contextSummary}\n${note}`,
          version,
        })
      ).status,
    ).toBe(200);
    const [first] = await historyOf(database.db, chatId);
    if (!first) throw new Error("no message");
    const notes = `## Notes you added\n${note}`;
    await rolledBackByEditing(database, browser, chatId, first.id);
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(notes);

    // The next fold (a turn's, or compact-now's): the fake summarizer keeps only goals, as a
    // forgetful model would.
    fake.reset();
    for (let turn = 5; turn < 10; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const folded = await chatRow(database.db, chatId);
    expect(folded.summaryWatermark).toBeTruthy();
    expect(folded.contextSummary?.endsWith(`\n\n${notes}`)).toBe(true);
    expect(folded.contextSummary?.split(note)).toHaveLength(2);
    const summarizerCalls = fake.requests.filter(isSummaryRequest);
    expect(summarizerCalls.length).toBeGreaterThan(0);
    for (const request of summarizerCalls) expect(summarizerPrompt(request)).not.toContain(note);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "And now?" });
    expect(sentSummary(lastChatRequest())?.endsWith(notes)).toBe(true);

    // A rollback past that fold finds them in the summary it replaces.
    await rolledBackByEditing(database, browser, chatId, first.id);
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(notes);
  });

  it("a note the user adds is kept as written: listed on its own, sent with the next request, carried by the next fold, and taken away again", async () => {
    const database = use();
    const { browser } = await register(database, "notes@example.com");
    const chatId = await compactedChat(database, browser);
    const { version } = await chatRow(database.db, chatId);
    const note = "Never book flights through Frankfurt.";
    for (const body of [
      {},
      { note: "", version },
      { note: "   ", version },
      { note: "two\nlines", version },
      { note: "x".repeat(501), version },
      { note },
      { note, version: -1 },
    ]) {
      expect((await changeNote(database, browser, chatId, "POST", body)).status).toBe(400);
    }
    const { browser: stranger } = await register(database, "notes-stranger@example.com");
    expect((await changeNote(database, stranger, chatId, "POST", { note, version })).status).toBe(
      404,
    );
    expect((await chatRow(database.db, chatId)).version).toBe(version);

    const added = await changeNote(database, browser, chatId, "POST", { note, version });
    expect(added.status).toBe(200);
    const { memory } = (await added.json()) as { memory: ChatMemory };
    expect(memory.notes).toEqual([`- ${note}`]);
    expect(memory.narrative).not.toContain(note);
    expect(memory.summary?.endsWith(`## Notes you added\n- ${note}`)).toBe(true);
    // The same note again, or a change against the version before it: refused, nothing written.
    const again = await changeNote(database, browser, chatId, "POST", {
      note: ` ${note} `,
      version: memory.version,
    });
    expect(again.status).toBe(409);
    const stale = await changeNote(database, browser, chatId, "POST", { note: "Other.", version });
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { error: { code: string } }).error.code).toBe(
      "conflict:summary",
    );
    expect((await chatRow(database.db, chatId)).version).toBe(memory.version);

    // Sent with the next request, and carried word for word by the next fold.
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "What did I ask for?" });
    expect(sentSummary(lastChatRequest())).toContain(`- ${note}`);
    for (let turn = 5; turn < 10; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const folded = await chatRow(database.db, chatId);
    expect(folded.contextSummary?.endsWith(`## Notes you added\n- ${note}`)).toBe(true);

    const removed = await changeNote(database, browser, chatId, "DELETE", {
      note,
      version: folded.version,
    });
    expect(removed.status).toBe(200);
    const after = ((await removed.json()) as { memory: ChatMemory }).memory;
    expect(after.notes).toEqual([]);
    expect(after.summary).not.toContain("Notes you added");
    expect(after.summary).toContain("## Goal & open requests");
    const gone = await changeNote(database, browser, chatId, "DELETE", {
      note,
      version: after.version,
    });
    expect(gone.status).toBe(404);
    const events = await eventsOf(database.db, chatId);
    expect(events.filter((e) => e.reason === "edited").map((e) => e.error)).toEqual([
      `note added by user: ${note}`,
      `note removed by user: ${note}`,
    ]);
  });

  it("refuses a note that would take what the model remembers past its limit, and changes nothing", async () => {
    const database = use();
    const { browser } = await register(database, "notes-full@example.com");
    const chatId = await compactedChat(database, browser);
    const long = `## Goal & open requests\n${"Keep going. ".repeat(5_000)}`.slice(0, 59_800);
    const { version } = await chatRow(database.db, chatId);
    expect((await putSummary(database, browser, chatId, { summary: long, version })).status).toBe(
      200,
    );
    const full = await chatRow(database.db, chatId);
    const refused = await changeNote(database, browser, chatId, "POST", {
      note: `Remember this: ${"x".repeat(400)}`,
      version: full.version,
    });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /at its limit/,
    );
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(full.contextSummary);
    // A short one still fits, and the summary can still be saved as it is.
    const short = await changeNote(database, browser, chatId, "POST", {
      note: "Short.",
      version: full.version,
    });
    expect(short.status).toBe(200);
    const now = await chatRow(database.db, chatId);
    expect(
      (
        await putSummary(database, browser, chatId, {
          summary: now.contextSummary,
          version: now.version,
        })
      ).status,
    ).toBe(200);
  });

  it("refuses a note past what a fold keeps word for word with the chat's model, changing nothing; every note it took passes the next fold as written", async () => {
    const database = use();
    const { browser } = await register(database, "notes-room@example.com");
    const chatId = await compactedChat(database, browser);
    const roomOf = async () =>
      ((await (await memoryOf(database, browser, chatId)).json()) as { memory: ChatMemory }).memory
        .notesRoom;
    const empty = await roomOf();
    expect(empty?.used).toBe(0);
    // The 4,096-token model keeps about a hundred tokens of notes: a few lines, not dozens.
    expect(empty?.capacity).toBeGreaterThan(20);
    expect(empty?.capacity).toBeLessThan(500);

    const added: string[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 40 && !refused; i++) {
      const note = `Part ${i} ships from warehouse W-${100 + i} in Lyon, never by air.`;
      const { version } = await chatRow(database.db, chatId);
      const response = await changeNote(database, browser, chatId, "POST", { note, version });
      if (response.status === 200) added.push(`- ${note}`);
      else refused = response;
    }
    expect(added.length).toBeGreaterThan(1);
    if (!refused) throw new Error("no note was refused");
    expect(refused.status).toBe(409);
    const { error } = (await refused.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("conflict:notes_full");
    expect(error.message).toMatch(
      /word for word up to about \d+ tokens; with this one they would take \d+\. Shorten it or take a note away/,
    );
    const before = await chatRow(database.db, chatId);
    expect(splitUserNotes(before.contextSummary).notes).toEqual(added);
    const full = await roomOf();
    expect(full?.used).toBeLessThanOrEqual(full?.capacity ?? 0);
    expect(full?.capacity).toBe(empty?.capacity);

    // The next fold keeps every one of them as written: none is handed to the summarizer.
    for (let turn = 5; turn < 10; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const folded = await chatRow(database.db, chatId);
    expect(folded.version).toBeGreaterThan(before.version);
    expect(splitUserNotes(folded.contextSummary).notes).toEqual(added);
    const prompts = fake.requests.filter(isSummaryRequest).map(summarizerPrompt);
    for (const note of added) expect(prompts.at(-1)).not.toContain(note.slice(2));
  });

  it("refuses a summary edit whose notes outgrow what a fold keeps word for word, changing nothing", async () => {
    const database = use();
    const { browser } = await register(database, "notes-by-edit@example.com");
    const chatId = await compactedChat(database, browser);
    const before = await chatRow(database.db, chatId);
    // A dozen notes typed into the editor: POST /memory/notes takes only a few of these.
    const notes = Array.from(
      { length: 12 },
      (_, i) => `- Part ${i} ships from warehouse W-${100 + i} in Lyon, never by air.`,
    );
    const crowded = `${before.contextSummary}\n\n## Notes you added\n${notes.join("\n")}`;
    const refused = await putSummary(database, browser, chatId, {
      summary: crowded,
      version: before.version,
    });
    expect(refused.status).toBe(409);
    const { error } = (await refused.json()) as { error: { code: string } };
    expect(error.code).toBe("conflict:notes_full");
    const after = await chatRow(database.db, chatId);
    expect(after.version).toBe(before.version);
    expect(after.contextSummary).toBe(before.contextSummary);

    // Two of them fit, and the edit saves; the next fold keeps them as written.
    const fits = `${before.contextSummary}\n\n## Notes you added\n${notes.slice(0, 2).join("\n")}`;
    expect(
      (await putSummary(database, browser, chatId, { summary: fits, version: before.version }))
        .status,
    ).toBe(200);
    for (let turn = 5; turn < 10; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    expect(splitUserNotes((await chatRow(database.db, chatId)).contextSummary).notes).toEqual(
      notes.slice(0, 2),
    );
  });

  it("a note taken away does not come back when an edit rolls the summary back to one from before, and the notes kept still stay", async () => {
    const database = use();
    const { browser } = await register(database, "notes-rollback@example.com");
    const chatId = await compactedChat(database, browser);
    const firstFold = (await chatRow(database.db, chatId)).summaryWatermark;
    const gone = "Book the 9:40 train.";
    const staying = "Codename BLUEBIRD.";
    for (const note of [gone, staying]) {
      const { version } = await chatRow(database.db, chatId);
      expect((await changeNote(database, browser, chatId, "POST", { note, version })).status).toBe(
        200,
      );
    }
    for (let turn = 5; turn < 10; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    // The user edits the summary's text (the notes come along in it), then takes a note away.
    const mine = "- The user's own line: the hotel is near the station.";
    const beforeEdit = await chatRow(database.db, chatId);
    const edited = (beforeEdit.contextSummary ?? "").replace(
      "## Notes you added",
      `${mine}\n\n## Notes you added`,
    );
    expect(
      (
        await putSummary(database, browser, chatId, {
          summary: edited,
          version: beforeEdit.version,
        })
      ).status,
    ).toBe(200);
    const folded = await chatRow(database.db, chatId);
    expect(
      (
        await changeNote(database, browser, chatId, "DELETE", {
          note: gone,
          version: folded.version,
        })
      ).status,
    ).toBe(200);

    // An edit between the two folds: the summary goes back to the first fold's, with the notes
    // as they are now.
    const between = await userMessageBetween(database, chatId, firstFold, folded.summaryWatermark);
    if (!between) throw new Error("no user message between the folds");
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Edited", id: between.id });
    const rolledBack = await chatRow(database.db, chatId);
    expect(rolledBack.summaryWatermark).toBe(firstFold);
    expect(rolledBack.contextSummary).not.toContain(gone);
    expect(rolledBack.contextSummary?.endsWith(`## Notes you added\n- ${staying}\n${mine}`)).toBe(
      true,
    );
  });

  it("notes a continued chat started with stay through a rollback in it; a summary of notes alone covers no message", async () => {
    const database = use();
    const { browser } = await register(database, "notes-handoff@example.com");
    const source = await compactedChat(database, browser);
    const note = "Never book flights through Frankfurt.";
    const { version } = await chatRow(database.db, source);
    expect((await changeNote(database, browser, source, "POST", { note, version })).status).toBe(
      200,
    );
    const created = await continueCall(database, browser, source);
    const chatId = ((await created.json()) as { chat: { id: string } }).chat.id;
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "First question here." });
    const first = (await historyOf(database.db, chatId)).find((m) => m.role === "user");
    if (!first) throw new Error("no message");
    for (let turn = 0; turn < 4; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    // Back past every fold of the new chat: to the summary it started from, the note with it.
    await rolledBackByEditing(database, browser, chatId, first.id);
    const notes = `## Notes you added\n- ${note}`;
    expect((await chatRow(database.db, chatId)).contextSummary?.endsWith(notes)).toBe(true);

    // The user keeps only their notes: nothing is summarized any more, so no message is covered
    // and there is nothing to continue from; the next turn folds the chat again, notes kept.
    const row = await chatRow(database.db, source);
    expect(
      (await putSummary(database, browser, source, { summary: notes, version: row.version }))
        .status,
    ).toBe(200);
    expect((await chatRow(database.db, source)).summaryWatermark).toBeNull();
    expect((await continueCall(database, browser, source)).status).toBe(409);
    fake.reset();
    await sendTurn(database, browser, { chatId: source, modelId: MODEL, text: "Still with me?" });
    // The fold starts from the first message again.
    const folding = fake.requests.find(isSummaryRequest);
    expect(folding && summarizerPrompt(folding)).toContain("https://example.com/notes/0");
    expect(sentSummary(lastChatRequest())?.endsWith(notes)).toBe(true);
  });

  it("a line of the notes longer than a new note may be is still taken away by its ×", async () => {
    const database = use();
    const { browser } = await register(database, "notes-long@example.com");
    const chatId = await compactedChat(database, browser);
    const row = await chatRow(database.db, chatId);
    const long = `- ${"The supplier contract says the deposit is refundable until May. ".repeat(12)}`;
    // Stored when the chat's model kept more notes word for word (an edit cannot put a line
    // this long there now: it is past this model's room for notes).
    await database.db
      .update(chat)
      .set({ contextSummary: `${row.contextSummary}\n\n## Notes you added\n${long}` })
      .where(eq(chat.id, chatId));
    const shown = (await (await memoryOf(database, browser, chatId)).json()) as {
      memory: ChatMemory;
    };
    expect(shown.memory.notes).toEqual([long.trimEnd()]);
    const removed = await changeNote(database, browser, chatId, "DELETE", {
      note: long.slice(2),
      version: shown.memory.version,
    });
    expect(removed.status).toBe(200);
    expect(((await removed.json()) as { memory: ChatMemory }).memory.notes).toEqual([]);
  });

  it("a chat with nothing summarized yet keeps a note as its whole summary, sent from the next request on", async () => {
    const database = use();
    const { browser } = await register(database, "notes-first@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Hello." });
    const { version } = await chatRow(database.db, chatId);
    const note = "Answer in French.";
    expect((await changeNote(database, browser, chatId, "POST", { note, version })).status).toBe(
      200,
    );
    const row = await chatRow(database.db, chatId);
    expect(row.contextSummary).toBe(`## Notes you added\n- ${note}`);
    expect(row.summaryWatermark).toBeNull();
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "And now?" });
    expect(sentSummary(lastChatRequest())).toBe(`## Notes you added\n- ${note}`);
    // Both messages are still sent as written: nothing is folded.
    expect(lastChatRequest()?.messages.map(contentText).join("\n")).toContain("Hello.");

    expect(
      (await changeNote(database, browser, chatId, "DELETE", { note, version: row.version }))
        .status,
    ).toBe(200);
    expect((await chatRow(database.db, chatId)).contextSummary).toBeNull();
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Still there?" });
    expect(sentSummary(lastChatRequest())).toBeNull();
  });

  it("an edit of the summary whose event cannot be stored changes nothing (the summary and its rollback point go together)", async () => {
    const database = use();
    const { browser } = await register(database, "memory-atomic@example.com");
    const chatId = await compactedChat(database, browser);
    const row = await chatRow(database.db, chatId);
    const events = await eventsOf(database.db, chatId);
    // The database refuses the event's row (as a failover between the two writes would).
    await whileInsertsRefused(
      database.db,
      "compaction_event",
      "new.reason = 'edited'",
      async () => {
        const saved = await putSummary(database, browser, chatId, {
          summary: "## Decisions & facts\n- Never stored.",
          version: row.version,
        });
        expect(saved.status).toBeGreaterThanOrEqual(500);
      },
    );
    const after = await chatRow(database.db, chatId);
    expect(after.contextSummary).toBe(row.contextSummary);
    expect(after.version).toBe(row.version);
    expect(await eventsOf(database.db, chatId)).toHaveLength(events.length);
    // The same edit again, with the same version, goes through.
    const retried = await putSummary(database, browser, chatId, {
      summary: "## Decisions & facts\n- Stored now.",
      version: row.version,
    });
    expect(retried.status).toBe(200);
  });

  it("an edit of the summary whose timeline entry cannot be stored changes nothing, and the same edit can be sent again", async () => {
    const database = use();
    const { browser } = await register(database, "memory-entry@example.com");
    const chatId = await compactedChat(database, browser);
    const row = await chatRow(database.db, chatId);
    // The database refuses the edit's trace entry in the timeline.
    const entry = "new.parts::text like '%edited by user%'";
    await whileInsertsRefused(database.db, "message", entry, async () => {
      const saved = await putSummary(database, browser, chatId, {
        summary: "## Decisions & facts\n- Never stored.",
        version: row.version,
      });
      expect(saved.status).toBeGreaterThanOrEqual(500);
    });
    const after = await chatRow(database.db, chatId);
    expect(after.contextSummary).toBe(row.contextSummary);
    expect(after.version).toBe(row.version);
    // Retrying what failed is not a conflict with itself.
    const retried = await putSummary(database, browser, chatId, {
      summary: "## Decisions & facts\n- Stored now.",
      version: row.version,
    });
    expect(retried.status).toBe(200);
  });

  it("a short message that does not fit beside the pinned messages says so, and asks to unpin", async () => {
    const database = use();
    const { browser } = await register(database, "pins-full@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(1, 1300) });
    const [big] = await historyOf(database.db, chatId);
    if (!big) throw new Error("no message");
    expect(
      (await pinCall(database, browser, chatId, { messageId: big.id, pinned: true })).status,
    ).toBe(200);
    const refused = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: longMessage(2, 1300),
    });
    // Refused after the turn's compaction folded what it could: the stream says why.
    const error = refused.chunks.find((c) => c.type === "error") as { errorText?: string };
    expect(error?.errorText).toMatch(/does not fit beside the pinned message/);
    expect(error?.errorText).toMatch(/Unpin all in Memory/);
    expect(fake.requests.filter((r) => !isSummaryRequest(r))).toHaveLength(1);
    // Unpinned, the same message goes through: the old one is folded away.
    expect(
      (await pinCall(database, browser, chatId, { messageId: big.id, pinned: false })).status,
    ).toBe(200);
    const answered = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: longMessage(3, 1300),
    });
    expect(answered.response.status).toBe(200);
  });

  it("a message too long on its own is refused before it is stored, with the model's window, and asks to shorten it", async () => {
    const database = use();
    const { browser } = await register(database, "too-long-alone@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "A short opener." });
    const refused = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: longMessage(1, 4000),
    });
    // A 400 (the page puts the text back in the box), not a stored message no Retry can answer.
    expect(refused.response.status).toBe(400);
    const { message } = ((await refused.response.json()) as { error: { message: string } }).error;
    expect(message).toMatch(/too long on its own/);
    expect(message).toMatch(/context window is 4,096 tokens/);
    expect(message).toMatch(/Shorten it/);
    expect((await historyOf(database.db, chatId)).map((m) => m.role)).toEqual([
      "user",
      "assistant",
    ]);
    expect(fake.requests.filter((r) => !isSummaryRequest(r))).toHaveLength(1);
  });

  it("an edit too long on its own is refused before it rewrites anything", async () => {
    const database = use();
    const { browser } = await register(database, "too-long-edit@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "The first question." });
    const [first] = await historyOf(database.db, chatId);
    if (!first) throw new Error("no message");
    const refused = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      id: first.id,
      text: longMessage(1, 4000),
    });
    expect(refused.response.status).toBe(400);
    const after = await historyOf(database.db, chatId);
    expect(after.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(JSON.stringify(after[0]?.parts)).toContain("The first question.");
  });

  it("continue in a new chat brings the pinned messages along, still pinned and sent verbatim", async () => {
    const database = use();
    const { browser } = await register(database, "handoff-pins@example.com");
    const chatId = await newChat(database, browser);
    const pinnedText = "Pinned for good: the staging host is stg-4.example.net, port 7443.";
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: pinnedText });
    const [pinnedRow] = await historyOf(database.db, chatId);
    if (!pinnedRow) throw new Error("no message");
    expect(
      (await pinCall(database, browser, chatId, { messageId: pinnedRow.id, pinned: true })).status,
    ).toBe(200);
    for (let turn = 0; turn < 4; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    // A second one, pinned before the fold and unpinned after: no summary tells it yet.
    const second = (await historyOf(database.db, chatId)).filter((m) => m.role === "user")[1];
    if (!second) throw new Error("no second message");
    expect(
      (await pinCall(database, browser, chatId, { messageId: second.id, pinned: true })).status,
    ).toBe(200);
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    // The summarizer was never given it: only the pin keeps it.
    expect((await chatRow(database.db, chatId)).contextSummary).not.toContain("stg-4");
    expect(
      (await pinCall(database, browser, chatId, { messageId: second.id, pinned: false })).status,
    ).toBe(200);

    const response = await continueCall(database, browser, chatId);
    expect(response.status).toBe(201);
    const created = ((await response.json()) as { chat: { id: string } }).chat.id;
    const carried = await historyOf(database.db, created);
    // The pinned one stays pinned; the unpinned one comes as a plain message, to be folded
    // there; then the latest messages, after the summary's watermark (not its timeline entry).
    const sourceRows = await historyOf(database.db, chatId);
    const { summaryWatermark } = await chatRow(database.db, chatId);
    const watermarkSeq = sourceRows.find((m) => m.id === summaryWatermark)?.seq ?? -1;
    const latest = sourceRows.filter((m) => m.seq > watermarkSeq && !isTraceEntry(m));
    expect(latest.length).toBeGreaterThan(0);
    expect(carried.map((m) => [m.role, m.metadata])).toEqual([
      ["user", { pinned: true }],
      ["user", null],
      ...latest.map((m) => [m.role, null]),
    ]);
    expect(JSON.stringify(carried[1]?.parts)).toBe(JSON.stringify(second.parts));
    expect(carried.slice(2).map((m) => JSON.stringify(m.parts))).toEqual(
      latest.map((m) => JSON.stringify(m.parts)),
    );
    expect(carried[0]?.id).not.toBe(pinnedRow.id);
    const memory = (
      (await (await memoryOf(database, browser, created)).json()) as { memory: ChatMemory }
    ).memory;
    expect(memory.pinnedIds).toEqual([carried[0]?.id]);

    fake.reset();
    await sendTurn(database, browser, { chatId: created, modelId: MODEL, text: "Which host?" });
    const request = lastChatRequest();
    expect(request?.messages.some((m) => contentText(m) === pinnedText)).toBe(true);
    expect(sentSummary(request)).toBeTruthy();
  });
});
