import { afterAll, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a 4,096-token window; it also answers as the summarizer.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({
    models: [{ id: "small", maxModelLen: 4096 }],
    replyTokens: 60,
  });
});

import * as exportRoute from "@/app/api/chats/[id]/export/route";
import { chatExportSchema } from "@/lib/chat/export";
import type { Database } from "@/lib/db/client";
import { loadHistory } from "@/lib/db/queries/messages";
import { answerParts } from "@/lib/message/retry-marker";
import { messageText, rowToUIMessage } from "@/lib/message/ui-message";
import { register } from "../../helpers/auth";
import { chatRow, compactNowCall, isTraceEntry, pinCall } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { anonymous, type Browser, call } from "../../helpers/http";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

const MODEL = "fake:small";
const TURNS = 3;

afterAll(() => fake.close());

function exportChat(database: Database, browser: Browser, chatId: string, query: string) {
  return call(database, exportRoute.GET, {
    path: `/api/chats/${chatId}/export${query}`,
    params: { id: chatId },
    browser,
  });
}

/** A chat with three long turns and a manual compaction's trace entry in its timeline. */
async function storedChat(database: Database, email: string) {
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
  expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
  const rows = await loadHistory(database.db, chatId);
  expect(rows.some(isTraceEntry)).toBe(true);
  return { browser, chatId, rows };
}

describeEachDriver("GET /api/chats/:id/export", (use) => {
  it("exports every stored message as JSON, in order, with roles, text and parts that round-trip", async () => {
    const database = use();
    const { browser, chatId, rows } = await storedChat(database, "json@example.com");

    const response = await exportChat(database, browser, chatId, "?format=json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("content-disposition")).toMatch(
      /^attachment; filename=".+\.json"; filename\*=UTF-8''.+\.json$/,
    );
    const exported = chatExportSchema.parse(JSON.parse(await response.text()));

    expect(exported.chat.id).toBe(chatId);
    expect(exported.messages.map((m) => m.id)).toEqual(rows.map((r) => r.id));
    expect(exported.messages.map((m) => m.role)).toEqual(rows.map((r) => r.role));
    expect(exported.messages.map((m) => m.text)).toEqual(
      rows.map((r) => messageText({ parts: answerParts(rowToUIMessage(r).parts) })),
    );
    // Parts and metadata come back exactly as stored: the file is a faithful copy.
    expect(exported.messages.map((m) => m.parts)).toEqual(rows.map((r) => r.parts));
    expect(exported.messages.map((m) => m.metadata)).toEqual(rows.map((r) => r.metadata ?? null));
    // Each user message's text is the one that was sent.
    const userTexts = exported.messages.filter((m) => m.role === "user").map((m) => m.text);
    expect(userTexts).toEqual(Array.from({ length: TURNS }, (_, turn) => longMessage(turn)));
    // The summary the compaction wrote travels with it.
    expect(exported.chat.summary).toContain("## Goal & open requests");
  });

  it("exports a readable Markdown transcript, each message under who said it", async () => {
    const database = use();
    const { browser, chatId, rows } = await storedChat(database, "md@example.com");

    const response = await exportChat(database, browser, chatId, "?format=markdown");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/markdown/);
    expect(response.headers.get("content-disposition")).toMatch(/filename=".+\.md"; /);
    const markdown = await response.text();

    expect(markdown).toMatch(/^# .+\n/);
    expect(markdown.match(/^### You · /gm)).toHaveLength(TURNS);
    // Every user message and every reply appears, in the stored order.
    let from = 0;
    for (const row of rows) {
      const text = messageText({ parts: answerParts(rowToUIMessage(row).parts) });
      if (!text) continue;
      const at = markdown.indexOf(text, from);
      expect(at, `message ${row.id} is missing or out of order`).toBeGreaterThanOrEqual(from);
      from = at + text.length;
    }
    expect(markdown).toMatch(/Summarized older messages to make room \(\d+ messages\)/);
  });

  it("carries what the chat remembers: the summary and where it stops, the pins, and earlier versions of an edited turn", async () => {
    const database = use();
    const { browser, chatId, rows } = await storedChat(database, "memory-export@example.com");
    const first = rows.find((r) => r.role === "user");
    if (!first) throw new Error("no user message");
    expect(
      (await pinCall(database, browser, chatId, { messageId: first.id, pinned: true })).status,
    ).toBe(200);
    // The last message edited: the turn it replaces becomes an earlier version.
    const last = rows.filter((r) => r.role === "user").at(-1);
    if (!last) throw new Error("no user message");
    const edited = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      id: last.id,
      text: "An edited last question.",
    });
    expect(edited.response.status).toBe(200);

    const json = chatExportSchema.parse(
      JSON.parse(await (await exportChat(database, browser, chatId, "?format=json")).text()),
    );
    const chat = await chatRow(database.db, chatId);
    expect(json.chat.summaryWatermark).toBe(chat.summaryWatermark);
    expect(json.chat.summaryWatermark).not.toBeNull();
    expect(json.messages.filter((m) => m.pinned).map((m) => m.id)).toEqual([first.id]);
    // The turn as it was before the edit: the old question and its reply.
    expect(json.versions).toHaveLength(1);
    const [version] = json.versions;
    expect(version?.anchorId).toBe(last.id);
    expect(version?.messages[0]?.text).toBe(longMessage(TURNS - 1));
    expect(version?.messages.some((m) => m.role === "assistant")).toBe(true);
    expect(json.messages.find((m) => m.id === last.id)?.text).toBe("An edited last question.");

    const markdown = await (await exportChat(database, browser, chatId, "?format=markdown")).text();
    expect(markdown).toContain("## Summary of the earlier conversation");
    // Its first section, one level below the summary's own heading.
    expect(chat.contextSummary).toMatch(/^## /);
    expect(markdown).toContain(`\n#${chat.contextSummary?.split("\n")[0]}\n`);
    expect(markdown).toContain("_Pinned._");
    expect(markdown).toContain("Earlier versions of edited turns (1)");
  });

  it("answers 404 to another user and 401 to a stranger, without the chat's text", async () => {
    const database = use();
    const { chatId, rows } = await storedChat(database, "owner@example.com");
    const { browser: other } = await register(database, "other@example.com");
    const firstUser = rows.find((row) => row.role === "user");
    if (!firstUser) throw new Error("the chat has no user message");
    const secret = messageText({ parts: answerParts(rowToUIMessage(firstUser).parts) });

    for (const format of ["json", "markdown"]) {
      const response = await exportChat(database, other, chatId, `?format=${format}`);
      expect(response.status, format).toBe(404);
      expect(await response.text()).not.toContain(secret.slice(0, 40));
      const signedOut = await exportChat(database, anonymous(), chatId, `?format=${format}`);
      expect(signedOut.status, format).toBe(401);
    }
  });

  it("answers 400 to a missing, unknown or repeated format", async () => {
    const database = use();
    const { browser } = await register(database, "format@example.com");
    const chatId = await newChat(database, browser);
    for (const query of [
      "",
      "?format=pdf",
      "?format=json&extra=1",
      // Which one was meant is not the server's to pick.
      "?format=json&format=markdown",
    ]) {
      const response = await exportChat(database, browser, chatId, query);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        "bad_request:query",
      );
    }
  });
});
