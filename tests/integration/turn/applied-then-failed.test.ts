import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A turn whose request changed the stored history (an edit, a regenerate) and whose next
// statement failed: its answer must not say it never came, since sending it again applies the
// change again.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, { COMPACTION_BACKGROUND: "false" });
});

// Noting the turn on its chat (after the request was applied) can be made to fail once.
const failing = vi.hoisted(() => ({ nextNote: false }));
vi.mock("@/lib/db/queries/chats", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/db/queries/chats")>();
  return {
    ...actual,
    noteTurnOnChat: async (...args: Parameters<typeof actual.noteTurnOnChat>) => {
      if (!failing.nextNote) return actual.noteTurnOnChat(...args);
      failing.nextNote = false;
      return Promise.reject(new Error("Connection terminated unexpectedly"));
    },
  };
});

import * as branchesRoute from "@/app/api/chats/[id]/branches/route";
import type { Database } from "@/lib/db/client";
import { usageOn } from "@/lib/db/queries/usage";
import { usageDayOf } from "@/lib/limits/quota-day";
import { register } from "../../helpers/auth";
import { historyOf } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";
import { newChat, postRegenerate, postTurn, sendTurn } from "../../helpers/turns";
import { eventually, readChunks, textOf } from "../../helpers/ui-stream";

const MODEL = "fake:small";
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  failing.nextNote = false;
});

async function settled(database: Database, chatId: string, response: Response) {
  const chunks = response.ok ? await readChunks(response) : [];
  await eventually(async () => !(await isTurnActive(database.db, chatId)));
  return chunks;
}

async function versionsOf(database: Database, browser: Browser, chatId: string) {
  const response = await call(database, branchesRoute.GET, {
    path: `/api/chats/${chatId}/branches`,
    params: { id: chatId },
    browser,
  });
  return ((await response.json()) as { branches: Array<{ count: number }> }).branches;
}

const errorsOf = (chunks: ReadonlyArray<Record<string, unknown>>) =>
  chunks.filter((c) => c.type === "error").map((c) => String(c.errorText));

describeEachDriver("a turn that fails after its request changed the chat", (use) => {
  it("an edit stands, says so, gives its message back, and Retry answers it without a second version", async () => {
    const database = use();
    const { browser, response: signedUp } = await register(database, "edit-then-fail@example.com");
    const { user } = (await signedUp.json()) as { user: { id: string } };
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "First question." });
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Second question." });
    const [first] = await historyOf(database.db, chatId);
    if (!first) throw new Error("no first message");
    const day = usageDayOf(new Date());
    const messagesBefore = (await usageOn(database.db, user.id, day)).messages;

    failing.nextNote = true;
    // An edit: the first message's id with new text.
    const edit = await postTurn(database, browser, {
      chatId,
      modelId: MODEL,
      id: first.id,
      text: "Edited.",
    });
    // Answered as a turn that failed, not refused as one that never came ("send it again").
    expect(edit.status).toBe(200);
    const chunks = await settled(database, chatId, edit);
    expect(errorsOf(chunks)).toEqual([
      expect.stringMatching(/^Your message is saved, but its reply could not start/),
    ]);
    // The chat as the edit left it: the edited message, unanswered; the rest a version away.
    const after = await historyOf(database.db, chatId);
    expect(after.map((m) => m.role)).toEqual(["user"]);
    expect(after[0]?.parts).toEqual([{ type: "text", text: "Edited." }]);
    expect((await versionsOf(database, browser, chatId)).map((b) => b.count)).toEqual([2]);
    // No model answered it: the day's message goes back.
    expect((await usageOn(database.db, user.id, day)).messages).toBe(messagesBefore);

    // The page's Retry asks for the reply to the unanswered message (its own id for the reply).
    const start = chunks.find((c) => c.type === "start");
    const retry = await postRegenerate(database, browser, {
      chatId,
      modelId: MODEL,
      messageId: String(start?.messageId),
    });
    expect(retry.status).toBe(200);
    const answered = await settled(database, chatId, retry);
    expect(errorsOf(answered)).toEqual([]);
    expect(textOf(answered)).not.toBe("");
    expect((await historyOf(database.db, chatId)).map((m) => m.role)).toEqual([
      "user",
      "assistant",
    ]);
    expect((await versionsOf(database, browser, chatId)).map((b) => b.count)).toEqual([2]);
  });

  it("a regenerate stands too: the earlier reply is a version away, and Retry answers", async () => {
    const database = use();
    const { browser } = await register(database, "regenerate-then-fail@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "A question." });
    const reply = (await historyOf(database.db, chatId)).at(-1);

    failing.nextNote = true;
    const regenerate = await postRegenerate(database, browser, {
      chatId,
      modelId: MODEL,
      messageId: reply?.id,
    });
    expect(regenerate.status).toBe(200);
    const chunks = await settled(database, chatId, regenerate);
    expect(errorsOf(chunks)).toEqual([expect.stringMatching(/^Your message is saved/)]);
    expect((await historyOf(database.db, chatId)).map((m) => m.role)).toEqual(["user"]);

    const retry = await postRegenerate(database, browser, {
      chatId,
      modelId: MODEL,
      messageId: String(chunks.find((c) => c.type === "start")?.messageId),
    });
    expect(retry.status).toBe(200);
    expect(errorsOf(await settled(database, chatId, retry))).toEqual([]);
    expect((await historyOf(database.db, chatId)).map((m) => m.role)).toEqual([
      "user",
      "assistant",
    ]);
  });
});
