import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a 4,096-token window; it also answers as the summarizer.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, {
    // Compactions happen where this file asks for them, not in the background after a reply.
    COMPACTION_BACKGROUND: "false",
  });
});

import * as chatApi from "@/app/api/chat/route";
import * as branchesRoute from "@/app/api/chats/[id]/branches/route";
import * as notesRoute from "@/app/api/chats/[id]/memory/notes/route";
import * as memoryRoute from "@/app/api/chats/[id]/memory/route";
import { chatRecall } from "@/lib/chat/recall";
import type { Database } from "@/lib/db/client";
import { acquireLease } from "@/lib/db/queries/leases";
import { contentText } from "../../fixtures/fake-openai/request";
import type { RecordedRequest } from "../../fixtures/fake-openai/types";
import { register } from "../../helpers/auth";
import {
  chatRow,
  compactNowCall,
  historyOf,
  isSummaryRequest,
  isTraceEntry,
  pinCall,
} from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
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

afterAll(() => fake.close());
beforeEach(() => fake.reset());

/** A stored message's text. */
const contentOf = (parts: unknown) =>
  (parts as Array<{ text?: string }>).map((part) => part.text ?? "").join("");

type Switch = { messageId: string; shownOn: string; position: number; count: number };
type BranchesJson = {
  branches: Switch[];
  edit?: { messageId: string; laterMessages: number; throughId: string | null };
};
type SwitchedJson = { messages: Array<{ id: string; parts: unknown[] }>; branches: Switch[] };

function branchesOf(database: Database, browser: Browser, chatId: string, query = "") {
  return call(database, branchesRoute.GET, {
    path: `/api/chats/${chatId}/branches${query}`,
    params: { id: chatId },
    browser,
  });
}

function switchTo(database: Database, browser: Browser, chatId: string, body: unknown) {
  return call(database, branchesRoute.POST, {
    path: `/api/chats/${chatId}/branches`,
    method: "POST",
    body,
    params: { id: chatId },
    browser,
  });
}

/** A new chat of five long turns, folded once (Compact now). */
async function foldedChat(database: Database, browser: Browser): Promise<string> {
  const chatId = await newChat(database, browser);
  for (let turn = 0; turn < 5; turn++) {
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
  }
  expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
  return chatId;
}

/** Adds a note the model keeps, against the chat's version as it is now. */
async function addNote(database: Database, browser: Browser, chatId: string, note: string) {
  return call(database, notesRoute.POST, {
    path: `/api/chats/${chatId}/memory/notes`,
    method: "POST",
    body: { note, version: (await chatRow(database.db, chatId)).version },
    params: { id: chatId },
    browser,
  });
}

async function edit(
  database: Database,
  browser: Browser,
  chatId: string,
  id: string,
  text: string,
) {
  const response = await call(database, chatApi.POST, {
    path: "/api/chat",
    method: "POST",
    body: {
      trigger: "submit-message",
      chatId,
      modelId: MODEL,
      message: { id, role: "user", parts: [{ type: "text", text }] },
    },
    browser,
  });
  expect(response.status).toBe(200);
  await readChunks(response);
  await eventually(async () => !(await isTurnActive(database.db, chatId)));
}

async function regenerate(
  database: Database,
  browser: Browser,
  chatId: string,
  messageId?: string,
) {
  const response = await postRegenerate(database, browser, { chatId, modelId: MODEL, messageId });
  expect(response.status).toBe(200);
  await readChunks(response);
  await eventually(async () => !(await isTurnActive(database.db, chatId)));
}

const textOf = (row: { parts: unknown }) =>
  (row.parts as Array<{ type: string; text?: string }>)
    .map((p) => (p.type === "text" ? (p.text ?? "") : ""))
    .join("");

/** The summary a chat-model request carried, or null. */
function sentSummary(request: RecordedRequest | undefined): string | null {
  const text = (request?.messages ?? []).map(contentText).join("\n");
  const match = /<conversation-summary>\n([\s\S]*?)\n<\/conversation-summary>/.exec(text);
  return match?.[1] ?? null;
}

/** Everything a recorded request carried, as text. */
const requestText = (request: RecordedRequest) => request.messages.map(contentText).join("\n");

const lastChatRequest = () => fake.requests.filter((r) => !isSummaryRequest(r)).at(-1);

describeEachDriver("Safe edits: an edit keeps the old version as a branch", (use) => {
  it("a note added in another version stays the user's: a rollback in this one keeps it", async () => {
    const database = use();
    const { browser } = await register(database, "branches-notes-rollback@example.com");
    const chatId = await foldedChat(database, browser);
    const [first] = await historyOf(database.db, chatId);
    if (!first) throw new Error("no message");
    await edit(database, browser, chatId, first.id, "First question, edited.");
    // Back in the first version, the note is added there; the second version takes it along.
    expect(
      (await switchTo(database, browser, chatId, { messageId: first.id, position: 1 })).status,
    ).toBe(200);
    const note = "Never book flights through Frankfurt.";
    expect((await addNote(database, browser, chatId, note)).status).toBe(200);
    expect(
      (await switchTo(database, browser, chatId, { messageId: first.id, position: 2 })).status,
    ).toBe(200);
    for (let turn = 5; turn < 10; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const notes = `## Notes you added\n- ${note}`;
    expect((await chatRow(database.db, chatId)).contextSummary?.endsWith(notes)).toBe(true);

    // An edit before this version's fold rolls back past it: the note is the user's, and stays.
    const second = (await historyOf(database.db, chatId)).filter((m) => m.role === "user")[1];
    if (!second) throw new Error("no second message");
    await edit(database, browser, chatId, second.id, "Second question, edited.");
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(notes);
  });

  it("the user's notes stay whichever version shows: a switch brings back that version's summary with the notes as they are now", async () => {
    const database = use();
    const { browser } = await register(database, "branches-notes@example.com");
    const chatId = await foldedChat(database, browser);
    const [first] = await historyOf(database.db, chatId);
    if (!first) throw new Error("no message");
    // The edit rolls back past the fold; the note is added to the edited version, and one more
    // in an edit of the summary, a blank line between them.
    await edit(database, browser, chatId, first.id, "First question, edited.");
    const note = "Never book flights through Frankfurt.";
    expect((await addNote(database, browser, chatId, note)).status).toBe(200);
    const notes = `## Notes you added\n- ${note}\n\n- Aisle seats only.`;
    const edited = await call(database, memoryRoute.PUT, {
      path: `/api/chats/${chatId}/memory`,
      method: "PUT",
      body: {
        summary: `${(await chatRow(database.db, chatId)).contextSummary}\n\n- Aisle seats only.`,
        version: (await chatRow(database.db, chatId)).version,
      },
      params: { id: chatId },
      browser,
    });
    expect(edited.status).toBe(200);
    expect(
      (await switchTo(database, browser, chatId, { messageId: first.id, position: 1 })).status,
    ).toBe(200);
    const original = await chatRow(database.db, chatId);
    // The first version's own fold, and the note.
    expect(original.summaryWatermark).toBeTruthy();
    expect(original.contextSummary).toContain("## Goal & open requests");
    expect(original.contextSummary?.endsWith(notes)).toBe(true);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "And now?" });
    expect(sentSummary(lastChatRequest())?.endsWith(notes)).toBe(true);
    expect(
      (await switchTo(database, browser, chatId, { messageId: first.id, position: 2 })).status,
    ).toBe(200);
    expect((await chatRow(database.db, chatId)).contextSummary?.endsWith(notes)).toBe(true);
  });

  it("tells how many messages an edit moves away, keeps them, and switches back and forth with each version's own summary", async () => {
    const database = use();
    const { browser } = await register(database, "branches@example.com");
    const chatId = await foldedChat(database, browser);
    const original = await historyOf(database.db, chatId);
    const compacted = await chatRow(database.db, chatId);
    expect(compacted.contextSummary).toBeTruthy();
    const first = original[0];
    if (!first) throw new Error("no first message");

    // The edit asks first, with the real count of what it moves away.
    const impact = (await (
      await branchesOf(database, browser, chatId, `?messageId=${first.id}`)
    ).json()) as BranchesJson;
    // Every later message; the compact-now entry in the timeline is not one.
    const later = original.slice(1).filter((m) => !isTraceEntry(m));
    expect(later.length).toBe(original.length - 2);
    expect(impact.edit).toEqual({
      messageId: first.id,
      laterMessages: later.length,
      throughId: later.at(-1)?.id,
    });
    expect(impact.branches).toEqual([]);

    await edit(database, browser, chatId, first.id, "A different first question, please.");
    const editedHistory = await historyOf(database.db, chatId);
    expect(editedHistory).toHaveLength(2);
    // The summary of the old version is not the edited version's.
    expect((await chatRow(database.db, chatId)).contextSummary).toBeNull();
    const listed = (await (await branchesOf(database, browser, chatId)).json()) as BranchesJson;
    expect(listed.branches).toEqual([
      { messageId: first.id, shownOn: first.id, position: 2, count: 2 },
    ]);

    // Back to the first version: every message returns, in order, with its summary.
    const back = await switchTo(database, browser, chatId, { messageId: first.id, position: 1 });
    expect(back.status).toBe(200);
    const backJson = (await back.json()) as SwitchedJson;
    expect(backJson.messages.map((m) => m.id)).toEqual(original.map((m) => m.id));
    expect(backJson.branches).toEqual([
      { messageId: first.id, shownOn: first.id, position: 1, count: 2 },
    ]);
    const restored = await historyOf(database.db, chatId);
    expect(restored.map((m) => [m.id, m.parts])).toEqual(original.map((m) => [m.id, m.parts]));
    const onFirst = await chatRow(database.db, chatId);
    expect(onFirst.contextSummary).toBe(compacted.contextSummary);
    expect(onFirst.summaryWatermark).toBe(compacted.summaryWatermark);
    expect(onFirst.historyVersion).toBeGreaterThan(compacted.historyVersion);

    // The next turn on this version sends this version's summary.
    fake.reset();
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "And now?" });
    expect(sentSummary(lastChatRequest())).toBe(compacted.contextSummary?.trim());

    // And forth: the edited version, without the first version's summary.
    const forth = await switchTo(database, browser, chatId, { messageId: first.id, position: 2 });
    expect(forth.status).toBe(200);
    const forthJson = (await forth.json()) as SwitchedJson;
    expect(forthJson.messages.map((m) => m.id)).toEqual(editedHistory.map((m) => m.id));
    expect((await chatRow(database.db, chatId)).contextSummary).toBeNull();
    fake.reset();
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Carry on." });
    expect(sentSummary(lastChatRequest())).toBeNull();
    expect(contentText(lastChatRequest()?.messages[1] ?? { role: "user", content: "" })).toContain(
      "A different first question",
    );

    // The first version kept the turn sent on it.
    const again = (await (
      await switchTo(database, browser, chatId, { messageId: first.id, position: 1 })
    ).json()) as SwitchedJson;
    expect(again.messages).toHaveLength(original.length + 2);
  });

  it("switching to a version whose summary never told an unpinned message sends it verbatim again", async () => {
    const database = use();
    const { browser } = await register(database, "branch-unpin@example.com");
    const chatId = await newChat(database, browser);
    const pinnedText = `Keep this exactly: the vault code is 7731-QX. ${longMessage(90, 40)}`;
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: pinnedText });
    const [pinnedRow] = await historyOf(database.db, chatId);
    if (!pinnedRow) throw new Error("no message");
    expect(
      (await pinCall(database, browser, chatId, { messageId: pinnedRow.id, pinned: true })).status,
    ).toBe(200);
    for (let turn = 0; turn < 4; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const first = await chatRow(database.db, chatId);
    expect(first.summaryWatermark).toBeTruthy();
    await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "A question to edit later.",
    });
    const anchor = (await historyOf(database.db, chatId)).findLast((m) => m.role === "user");
    if (!anchor) throw new Error("no user message");

    // Version 2: the message is unpinned there, and a fold past the edit tells it.
    await edit(database, browser, chatId, anchor.id, "The edited question.");
    expect(
      (await pinCall(database, browser, chatId, { messageId: pinnedRow.id, pinned: false })).status,
    ).toBe(200);
    fake.reset();
    for (let turn = 4; turn < 8; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    expect(
      fake.requests.filter(isSummaryRequest).some((r) => requestText(r).includes("7731-QX")),
    ).toBe(true);
    const told = (await historyOf(database.db, chatId)).find((m) => m.id === pinnedRow.id);
    expect(told?.metadata).not.toHaveProperty("pinned");

    // Back to version 1: its summary is the first one, which never told the message.
    const back = await switchTo(database, browser, chatId, { messageId: anchor.id, position: 1 });
    expect(back.status).toBe(200);
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(first.contextSummary);
    fake.reset();
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "What is the vault code?" });
    expect(lastChatRequest()?.messages.some((m) => contentText(m) === pinnedText)).toBe(true);
  });

  it("a switch waiting for a background compaction of a chat deleted meanwhile answers that the chat is gone", async () => {
    const database = use();
    const { browser } = await register(database, "switch-deleted@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "First question." });
    const [first] = await historyOf(database.db, chatId);
    if (!first) throw new Error("no first message");
    await edit(database, browser, chatId, first.id, "First question, edited.");
    // A background compaction holds the chat (another instance's, say).
    expect(await acquireLease(database.db, chatId, 60_000, "compaction")).not.toBeNull();
    const switching = switchTo(database, browser, chatId, { messageId: first.id, position: 1 });
    await eventually(() => isTurnActive(database.db, chatId));
    const deleted = await deleteChat(database, browser, chatId);
    expect(deleted.status).toBe(204);
    const response = await switching;
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      "not_found:chat",
    );
  });

  it("answers 4xx to bad input and 404 for another user's chat, changing nothing", async () => {
    const database = use();
    const { browser } = await register(database, "owner@example.com");
    const { browser: stranger } = await register(database, "stranger@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Hello there." });
    const [first] = await historyOf(database.db, chatId);
    if (!first) throw new Error("no message");
    await edit(database, browser, chatId, first.id, "Hello again.");
    const before = await historyOf(database.db, chatId);

    expect((await branchesOf(database, stranger, chatId)).status).toBe(404);
    expect(
      (await switchTo(database, stranger, chatId, { messageId: first.id, position: 1 })).status,
    ).toBe(404);
    for (const body of [
      {},
      { messageId: first.id },
      { messageId: first.id, position: 0 },
      { messageId: first.id, position: 1.5 },
      { messageId: first.id, position: "1" },
      { messageId: first.id, position: 1, extra: true },
    ]) {
      expect((await switchTo(database, browser, chatId, body)).status).toBe(400);
    }
    expect(
      (await switchTo(database, browser, chatId, { messageId: first.id, position: 3 })).status,
    ).toBe(404);
    expect(
      (await switchTo(database, browser, chatId, { messageId: "nope", position: 1 })).status,
    ).toBe(404);
    expect((await branchesOf(database, browser, chatId, "?messageId=nope")).status).toBe(404);
    expect((await historyOf(database.db, chatId)).map((m) => m.id)).toEqual(
      before.map((m) => m.id),
    );
  });
});

describeEachDriver("Safe regenerate: the replaced reply stays a version away", (use) => {
  it("keeps the last reply it replaces, with the switch on the reply, and switches back and forth", async () => {
    const database = use();
    const { browser } = await register(database, "regen-last@example.com");
    const chatId = await newChat(database, browser);
    fake.script({ text: "The first answer." }, { text: "The second answer." });
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Which answer?" });
    const original = await historyOf(database.db, chatId);
    const [asked, reply] = original;
    if (!asked || !reply) throw new Error("no turn");
    expect(textOf(reply)).toBe("The first answer.");

    // The last reply: nothing after it moves, so nothing to ask.
    const impact = (await (
      await branchesOf(database, browser, chatId, `?messageId=${reply.id}`)
    ).json()) as BranchesJson;
    expect(impact.edit).toMatchObject({ messageId: reply.id, laterMessages: 0 });

    await regenerate(database, browser, chatId);
    const regenerated = await historyOf(database.db, chatId);
    expect(regenerated).toHaveLength(2);
    const [, second] = regenerated;
    if (!second) throw new Error("no new reply");
    expect(second.id).not.toBe(reply.id);
    expect(textOf(second)).toBe("The second answer.");
    const listed = (await (await branchesOf(database, browser, chatId)).json()) as BranchesJson;
    // Versions of the turn asked in `asked`, shown under its reply.
    expect(listed.branches).toEqual([
      { messageId: asked.id, shownOn: second.id, position: 2, count: 2 },
    ]);

    const back = (await (
      await switchTo(database, browser, chatId, { messageId: asked.id, position: 1 })
    ).json()) as SwitchedJson;
    expect(back.messages.map((m) => m.id)).toEqual([asked.id, reply.id]);
    expect(back.branches).toEqual([
      { messageId: asked.id, shownOn: reply.id, position: 1, count: 2 },
    ]);
    expect(textOf((await historyOf(database.db, chatId))[1] ?? { parts: [] })).toBe(
      "The first answer.",
    );

    const forth = (await (
      await switchTo(database, browser, chatId, { messageId: asked.id, position: 2 })
    ).json()) as SwitchedJson;
    expect(forth.messages.map((m) => m.id)).toEqual([asked.id, second.id]);

    // A third try adds a third version; the second stays reachable.
    fake.script({ text: "The third answer." });
    await regenerate(database, browser, chatId, second.id);
    const third = (await (await branchesOf(database, browser, chatId)).json()) as BranchesJson;
    expect(third.branches).toHaveLength(1);
    expect(third.branches[0]).toMatchObject({ messageId: asked.id, position: 3, count: 3 });
    const two = (await (
      await switchTo(database, browser, chatId, { messageId: asked.id, position: 2 })
    ).json()) as SwitchedJson;
    expect(two.messages.map((m) => m.id)).toEqual([asked.id, second.id]);
  });

  it("a version switched away and back keeps each message at its number: the summary and recall still name the same messages", async () => {
    const database = use();
    const { browser } = await register(database, "versions-numbers@example.com");
    const chatId = await newChat(database, browser);
    for (let turn = 0; turn < 4; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    // Compact now's entry lands after the last reply; regenerating that reply keeps the entry
    // (the summary stands) and leaves a gap in the chat's numbering where the reply was.
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const answered = (await historyOf(database.db, chatId)).filter((m) => m.role === "user").at(-1);
    const regenerated = await postRegenerate(database, browser, { chatId, modelId: MODEL });
    expect(regenerated.status).toBe(200);
    await readChunks(regenerated);
    await eventually(async () => !(await isTurnActive(database.db, chatId)));

    // A value planted after the gap, folded into the summary, which cites it by number.
    const planted = "/srv/app/plant-7c1e9.yaml";
    await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: `${longMessage(10)} The config lives at ${planted}.`,
    });
    for (let turn = 11; turn < 14; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const before = await historyOf(database.db, chatId);
    const plantedRow = before.find(
      (m) => m.role === "user" && contentOf(m.parts).includes(planted),
    );
    if (!plantedRow) throw new Error("the planted message is not in the chat");
    const number = plantedRow.seq + 1;
    const summary = (await chatRow(database.db, chatId)).contextSummary ?? "";
    expect(summary).toContain(`${planted} [${number}`);
    const recall = chatRecall(database.db, chatId);
    expect(JSON.stringify(await recall.read(number, 0))).toContain(planted);

    // To the first version of the regenerated turn and back: the same summary, the same numbers.
    const messageId = answered?.id;
    expect((await switchTo(database, browser, chatId, { messageId, position: 1 })).status).toBe(
      200,
    );
    expect((await switchTo(database, browser, chatId, { messageId, position: 2 })).status).toBe(
      200,
    );
    expect((await chatRow(database.db, chatId)).contextSummary).toBe(summary);
    const after = await historyOf(database.db, chatId);
    expect(after.map((m) => [m.id, m.seq])).toEqual(before.map((m) => [m.id, m.seq]));
    expect(JSON.stringify(await recall.read(number, 0))).toContain(planted);
  });

  it("shows a regenerated reply's switch on the reply when a compaction's entry sits before it", async () => {
    const database = use();
    const { browser } = await register(database, "regen-entry@example.com");
    const chatId = await newChat(database, browser);
    for (let turn = 0; turn < 4; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    // The message goes unanswered (the provider fails, through the SDK's retries); Compact now
    // then puts its entry after it, and Retry answers it after the entry.
    fake.script({ fault: "500" }, { fault: "500" }, { fault: "500" });
    const failed = await sendTurn(database, browser, { chatId, modelId: MODEL, text: "And now?" });
    expect(failed.chunks.some((c) => c.type === "error")).toBe(true);
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    fake.script({ text: "The first answer." }, { text: "The second answer." });
    await regenerate(database, browser, chatId);
    const [asked, entry, first] = (await historyOf(database.db, chatId)).slice(-3);
    if (!asked || !entry || !first) throw new Error("no turn");
    expect([asked.role, isTraceEntry(entry), textOf(first)]).toEqual([
      "user",
      true,
      "The first answer.",
    ]);

    await regenerate(database, browser, chatId, first.id);
    const second = (await historyOf(database.db, chatId)).at(-1);
    expect(second && textOf(second)).toBe("The second answer.");
    const listed = (await (await branchesOf(database, browser, chatId)).json()) as BranchesJson;
    // Under the reply, where the page draws it: never on the entry, which has no bar.
    expect(listed.branches).toEqual([
      { messageId: asked.id, shownOn: second?.id, position: 2, count: 2 },
    ]);
  });

  it("says how many later messages a regenerate moves away, keeps them all, and an edit after it moves the switch to the message", async () => {
    const database = use();
    const { browser } = await register(database, "regen-middle@example.com");
    const chatId = await newChat(database, browser);
    for (const text of ["One?", "Two?", "Three?"]) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text });
    }
    const original = await historyOf(database.db, chatId);
    expect(original).toHaveLength(6);
    const [asked, reply] = original;
    if (!asked || !reply) throw new Error("no turn");

    const impact = (await (
      await branchesOf(database, browser, chatId, `?messageId=${reply.id}`)
    ).json()) as BranchesJson;
    expect(impact.edit).toMatchObject({ messageId: reply.id, laterMessages: 4 });

    fake.script({ text: "A better first answer." });
    await regenerate(database, browser, chatId, reply.id);
    const now = await historyOf(database.db, chatId);
    expect(now.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(now[0]?.id).toBe(asked.id);
    expect(textOf(now[1] ?? { parts: [] })).toBe("A better first answer.");
    // The model was asked the first question alone, not what followed it.
    expect(lastChatRequest()?.messages.filter((m) => m.role === "user")).toHaveLength(1);

    const back = (await (
      await switchTo(database, browser, chatId, { messageId: asked.id, position: 1 })
    ).json()) as SwitchedJson;
    expect(back.messages.map((m) => m.id)).toEqual(original.map((m) => m.id));
    const restored = await historyOf(database.db, chatId);
    expect(restored.map((m) => [m.id, m.parts])).toEqual(original.map((m) => [m.id, m.parts]));

    // Editing the question adds a version of the same turn; the switch moves to the message.
    await edit(database, browser, chatId, asked.id, "One, rephrased?");
    const listed = (await (await branchesOf(database, browser, chatId)).json()) as BranchesJson;
    expect(listed.branches).toEqual([
      { messageId: asked.id, shownOn: asked.id, position: 3, count: 3 },
    ]);
  });

  it("refuses an edit from a tab still showing another version, of a message only that version holds", async () => {
    const database = use();
    const { browser } = await register(database, "stale-tab@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "First question." });
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Second question." });
    const [first, , second] = await historyOf(database.db, chatId);
    if (!first || !second) throw new Error("the chat is missing its questions");
    // One tab edits the first question: the second now lives only in the hidden version.
    await edit(database, browser, chatId, first.id, "The first question, rephrased.");
    const shown = await historyOf(database.db, chatId);

    // Another tab, still showing the old version, edits the second question.
    const stale = await postTurn(database, browser, {
      chatId,
      modelId: MODEL,
      id: second.id,
      text: "The second question, edited in a stale tab.",
    });
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { error: { code: string } }).error.code).toBe(
      "conflict:message",
    );
    expect((await historyOf(database.db, chatId)).map((m) => m.id)).toEqual(shown.map((m) => m.id));
    // The old version is still a switch away, whole.
    const switched = await switchTo(database, browser, chatId, {
      messageId: first.id,
      position: 1,
    });
    expect(switched.status).toBe(200);
    const back = (await switched.json()) as SwitchedJson;
    expect(back.messages.map((m) => m.id)).toContain(second.id);
    // An edit of a message the shown version holds still goes through.
    await edit(database, browser, chatId, first.id, "The first question, once more.");
  });

  it("refuses an edit or a regenerate confirmed for fewer messages than it would move: the chat went on in another tab since it was counted", async () => {
    const database = use();
    const { browser } = await register(database, "went-on@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "First question." });
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Second question." });
    const [first, firstReply] = await historyOf(database.db, chatId);
    if (!first || !firstReply) throw new Error("the chat is missing its first turn");
    // The page asks what an edit of the first question moves: the three messages after it.
    const counted = (await (
      await branchesOf(database, browser, chatId, `?messageId=${first.id}`)
    ).json()) as BranchesJson;
    const lastShown = (await historyOf(database.db, chatId)).at(-1)?.id;
    expect(counted.edit).toEqual({ messageId: first.id, laterMessages: 3, throughId: lastShown });
    const throughId = counted.edit?.throughId ?? undefined;

    // While its confirmation is open, another tab sends a turn.
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Third question." });
    const before = await historyOf(database.db, chatId);
    fake.reset();

    const stale = await postTurn(database, browser, {
      chatId,
      modelId: MODEL,
      id: first.id,
      text: "First question, rephrased.",
      throughId,
    });
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { error: { code: string } }).error.code).toBe(
      "conflict:message",
    );
    const staleRegenerate = await postRegenerate(database, browser, {
      chatId,
      modelId: MODEL,
      messageId: firstReply.id,
      throughId,
    });
    expect(staleRegenerate.status).toBe(409);
    // Nothing moved, nothing was asked of the model, no version was made.
    expect(fake.requests).toEqual([]);
    expect(await historyOf(database.db, chatId)).toEqual(before);
    const { branches } = (await (
      await branchesOf(database, browser, chatId)
    ).json()) as BranchesJson;
    expect(branches).toEqual([]);

    // Counted again, the edit goes through: all five later messages a switch away.
    const recounted = (await (
      await branchesOf(database, browser, chatId, `?messageId=${first.id}`)
    ).json()) as BranchesJson;
    expect(recounted.edit?.laterMessages).toBe(5);
    const edited = await postTurn(database, browser, {
      chatId,
      modelId: MODEL,
      id: first.id,
      text: "First question, rephrased.",
      throughId: recounted.edit?.throughId ?? undefined,
    });
    expect(edited.status).toBe(200);
    await readChunks(edited);
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    const shown = await historyOf(database.db, chatId);
    expect(shown.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(textOf(shown[0] as { parts: unknown })).toBe("First question, rephrased.");
  });

  it("refuses a regenerate from a tab still showing another version: another message is not answered in its place", async () => {
    const database = use();
    const { browser } = await register(database, "stale-regenerate@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "What is two plus two?" });
    const [asked, answered] = await historyOf(database.db, chatId);
    if (!asked || !answered) throw new Error("the chat is missing its turn");
    // One tab edits the question while the provider fails: the edited question stays unanswered.
    fake.script({ fault: "500" }, { fault: "500" }, { fault: "500" }, { fault: "500" });
    await edit(database, browser, chatId, asked.id, "What is the capital of France?");
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    fake.reset();
    expect((await historyOf(database.db, chatId)).map((m) => m.id)).toEqual([asked.id]);

    // Another tab, still showing the first version, regenerates its reply.
    const stale = await postRegenerate(database, browser, {
      chatId,
      modelId: MODEL,
      messageId: answered.id,
    });
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { error: { code: string } }).error.code).toBe(
      "conflict:message",
    );
    expect(fake.requests).toEqual([]);
    expect((await historyOf(database.db, chatId)).map((m) => m.id)).toEqual([asked.id]);
    // A reply that was never stored (the page's own id for it) still gets the unanswered message answered.
    const retried = await postRegenerate(database, browser, {
      chatId,
      modelId: MODEL,
      messageId: "reply-never-stored",
    });
    expect(retried.status).toBe(200);
    await readChunks(retried);
  });

  it("refuses to regenerate a message that is not in the chat, changing nothing", async () => {
    const database = use();
    const { browser } = await register(database, "regen-bad@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Hello there." });
    const before = await historyOf(database.db, chatId);
    const response = await postRegenerate(database, browser, {
      chatId,
      modelId: MODEL,
      messageId: "nope",
    });
    expect(response.status).toBe(404);
    expect((await historyOf(database.db, chatId)).map((m) => m.id)).toEqual(
      before.map((m) => m.id),
    );
    const listed = (await (await branchesOf(database, browser, chatId)).json()) as BranchesJson;
    expect(listed.branches).toEqual([]);
  });
});
