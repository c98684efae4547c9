import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A chat deleted while work on it still runs: a reply streaming, a compaction summarizing.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW);
});

// Fold's log lines, captured: a delete during a reply logs no error.
const logged = vi.hoisted(() => [] as string[]);
vi.mock("@/lib/log", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/log")>();
  const destination = { write: (line: string) => void logged.push(line) };
  return { ...actual, ...actual.createLogging({ level: "info", destination }) };
});

// Deleting can be made to fail once, as a database that drops the statement would; or something
// can happen just before it (a turn taking the chat after the route read it).
const failing = vi.hoisted(() => ({
  nextDelete: false,
  beforeDelete: undefined as (() => Promise<void>) | undefined,
}));
vi.mock("@/lib/db/queries/chats", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/db/queries/chats")>();
  return {
    ...actual,
    deleteChat: async (...args: Parameters<typeof actual.deleteChat>) => {
      const before = failing.beforeDelete;
      failing.beforeDelete = undefined;
      await before?.();
      if (!failing.nextDelete) return actual.deleteChat(...args);
      failing.nextDelete = false;
      return Promise.reject(new Error("Connection terminated unexpectedly"));
    },
  };
});

// Something can happen just before a turn stores its new message (beside its model call, once
// the statement that took the chat's lease has read it).
const storing = vi.hoisted(() => ({ before: undefined as (() => Promise<void>) | undefined }));
vi.mock("@/lib/db/queries/messages", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/db/queries/messages")>();
  return {
    ...actual,
    appendIfNewAndNote: async (...args: Parameters<typeof actual.appendIfNewAndNote>) => {
      const before = storing.before;
      storing.before = undefined;
      await before?.();
      return actual.appendIfNewAndNote(...args);
    },
  };
});

import * as chatRoute from "@/app/api/chats/[id]/route";
import type { Database } from "@/lib/db/client";
import { acquireLease, releaseLease } from "@/lib/db/queries/leases";
import { liveBus } from "@/lib/live/bus";
import { register } from "../../helpers/auth";
import { compactNowCall, isSummaryRequest } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { SMALL_WINDOW } from "../../helpers/fake-provider";
import { type Browser, call } from "../../helpers/http";
import { holdStopChannels } from "../../helpers/stop-channel";
import { longMessage, newChat, postTurn, sendTurn } from "../../helpers/turns";
import { eventually } from "../../helpers/ui-stream";

const MODEL = "fake:small";

afterAll(() => fake.close());
beforeEach(() => {
  failing.nextDelete = false;
  failing.beforeDelete = undefined;
  storing.before = undefined;
  fake.reset();
  fake.configure({ chunkDelayMs: 0, summaryDelayMs: 0, replyTokens: SMALL_WINDOW.replyTokens });
});

const remove = (database: Database, browser: Browser, chatId: string) =>
  call(database, chatRoute.DELETE, {
    path: `/api/chats/${chatId}`,
    method: "DELETE",
    params: { id: chatId },
    browser,
  });

const shown = (database: Database, browser: Browser, chatId: string) =>
  call(database, chatRoute.GET, { path: `/api/chats/${chatId}`, params: { id: chatId }, browser });

describeEachDriver("deleting a chat while work on it runs", (use) => {
  /**
   * A reply streaming, then its chat deleted (`deleted` runs right after): the provider request
   * is aborted (without the stop, the model would write its 400 tokens for a chat nobody has)
   * and the turn ends.
   */
  async function deleteMidReply(database: Database, email: string, deleted = () => {}) {
    const { browser } = await register(database, email);
    const chatId = await newChat(database, browser);
    fake.configure({ chunkDelayMs: 50, replyTokens: 400 });
    const response = await postTurn(database, browser, { chatId, modelId: MODEL, text: "Go on" });
    expect(response.status).toBe(200);
    const reader = response.body?.getReader();
    await reader?.read();
    await eventually(async () => fake.requests.length > 0);

    expect((await remove(database, browser, chatId)).status).toBe(204);
    deleted();
    await eventually(async () => fake.requests[0]?.abortedAt != null, 5_000);
    while (!(await reader?.read())?.done) {}
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    return { browser, chatId };
  }

  it("a reply that is streaming is stopped at its provider, and the chat is gone", async () => {
    const database = use();
    logged.length = 0;
    const { browser, chatId } = await deleteMidReply(database, "delete-streaming@example.com");
    expect((await shown(database, browser, chatId)).status).toBe(404);
    // Its reply had nowhere to go, which is no error.
    const lines = logged.map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(lines.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual([]);
  });

  it("a reply whose turn does not listen for Stop yet is stopped once it does", async () => {
    const database = use();
    // The turn's stop channel opens only once the chat is gone.
    const channels = holdStopChannels();
    try {
      await deleteMidReply(database, "delete-unheard@example.com", channels.open);
    } finally {
      channels.restore();
    }
  });

  it("a turn that took the chat after the delete read it is stopped too", async () => {
    const database = use();
    const { browser } = await register(database, "delete-raced@example.com");
    const chatId = await newChat(database, browser);
    // The route read the chat free; a turn takes it just before the delete.
    failing.beforeDelete = async () => {
      expect(await acquireLease(database.db, chatId, 30_000)).not.toBeNull();
    };
    expect((await remove(database, browser, chatId)).status).toBe(204);
    // The stop waits for that turn to listen, as for any turn not listening yet.
    expect(await liveBus().publisher.get(`fold:stop-pending-any:${chatId}`)).not.toBeNull();
  });

  it("a delete that fails leaves no stop waiting for the chat's next reply", async () => {
    const database = use();
    const { browser } = await register(database, "delete-failed@example.com");
    const chatId = await newChat(database, browser);
    // The chat's lease is held with no turn listening for Stop (as in a turn's last moments,
    // storing its reply): a delete's stop would wait for a turn to come and listen.
    const lease = await acquireLease(database.db, chatId, 30_000);
    if (!lease) throw new Error("the chat's lease was taken");
    failing.nextDelete = true;
    // Answered as a database that went away is: 503, try again.
    expect((await remove(database, browser, chatId)).status).toBe(503);
    expect((await shown(database, browser, chatId)).status).toBe(200);
    await releaseLease(database.db, lease);

    // The next message, well within the time that stop would wait, is answered in full.
    const { chunks } = await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Again" });
    const finish = chunks.find((c) => c.type === "finish") as
      | { messageMetadata?: { stopped?: boolean; stats?: { finishReason: string } } }
      | undefined;
    expect(finish?.messageMetadata?.stopped).toBeUndefined();
    expect(finish?.messageMetadata?.stats?.finishReason).toBe("stop");
  });

  it("a request waiting for the chat's lease when the chat is deleted answers 404, not 409", async () => {
    const database = use();
    const { browser } = await register(database, "delete-waiting@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Hello" });
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    // Taken by someone else: Compact now waits for it…
    const lease = await acquireLease(database.db, chatId, 30_000);
    const compacting = compactNowCall(database, browser, chatId, { modelId: MODEL });
    await new Promise((resolve) => setTimeout(resolve, 200));
    // …and the chat goes meanwhile.
    expect((await remove(database, browser, chatId)).status).toBe(204);
    const answer = await compacting;
    expect(answer.status).toBe(404);
    expect(lease).not.toBeNull();
  });

  it("a message whose chat is deleted as its turn stores it answers 404, not 'send it again'", async () => {
    const database = use();
    const { browser } = await register(database, "delete-storing@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Hello" });
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    // The turn has taken the chat's lease and read its history; the delete does not wait for it.
    storing.before = async () => {
      expect((await remove(database, browser, chatId)).status).toBe(204);
    };
    const response = await postTurn(database, browser, { chatId, modelId: MODEL, text: "More" });
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    // Not 503 "Your message could not be stored … Send it again": sent again, it finds no chat.
    expect({ status: response.status, code: error.code }).toEqual({
      status: 404,
      code: "not_found:chat",
    });
    expect(error.message).toBe("This chat was deleted.");
  });

  it("a Compact now whose chat is deleted while it summarizes answers 404, not an error", async () => {
    const database = use();
    const { browser } = await register(database, "delete-compacting@example.com");
    const chatId = await newChat(database, browser);
    for (let turn = 0; turn < 3; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    fake.configure({ summaryDelayMs: 1_500 });
    const summariesBefore = fake.requests.filter(isSummaryRequest).length;
    const compacting = compactNowCall(database, browser, chatId, { modelId: MODEL });
    await eventually(async () => fake.requests.filter(isSummaryRequest).length > summariesBefore);

    expect((await remove(database, browser, chatId)).status).toBe(204);
    const answer = await compacting;
    expect(answer.status).toBe(404);
    expect(await answer.json()).toMatchObject({ error: { code: "not_found:chat" } });
  });
});
