import { eq } from "drizzle-orm";
import { afterAll, expect, it, vi } from "vitest";

// A real OpenAI-compatible server; it answers the edit's turn.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, { COMPACTION_BACKGROUND: "false" });
});

import * as branchesRoute from "@/app/api/chats/[id]/branches/route";
import { PAGE_DEFAULT_LIMIT } from "@/lib/chat/schemas";
import type { Database } from "@/lib/db/client";
import { loadHistory } from "@/lib/db/queries/messages";
import { chat, message } from "@/lib/db/schema";
import { register } from "../../helpers/auth";
import { continueCall } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { type Browser, call } from "../../helpers/http";
import { newChat, postRegenerate, postTurn, sendTurn } from "../../helpers/turns";

const MODEL = "fake:small";
/**
 * Longer than one statement can write back: Postgres binds at most 65,535 values, and a stored
 * message takes six or seven.
 */
const LONG = 11_000;
/** More messages than one statement can name by id (65,535 bound values). */
const LONGER_THAN_BINDS = 66_000;
/**
 * Writing and moving that many messages takes 15–20 s on a 2-core machine (PGlite or
 * Postgres), and past a test's default 30 s when other work shares it.
 */
const LONGER_THAN_BINDS_TIMEOUT_MS = 90_000;

afterAll(() => fake.close());

/**
 * A chat of `count` messages, user and assistant in turn, ids m-0, m-1, …, each `text(seq)` (a
 * short one by default), written `batch` rows a statement (as the database takes them).
 */
async function seedLongChat(
  database: Database,
  chatId: string,
  count: number,
  options: { text?: (seq: number) => string; batch?: number } = {},
): Promise<void> {
  const { text = (seq: number) => `message ${seq}`, batch = 2_000 } = options;
  for (let from = 0; from < count; from += batch) {
    const rows = Array.from({ length: Math.min(batch, count - from) }, (_, i) => {
      const seq = from + i;
      return {
        id: `${chatId}-m-${seq}`,
        chatId,
        seq,
        role: seq % 2 === 0 ? ("user" as const) : ("assistant" as const),
        parts: [{ type: "text", text: text(seq) }],
      };
    });
    await database.db.insert(message).values(rows);
  }
}

/** Edits the chat's message `seq` (seeded by seedLongChat): its later messages become a version. */
function editSeeded(database: Database, browser: Browser, chatId: string, seq: number) {
  return sendTurn(database, browser, {
    chatId,
    modelId: MODEL,
    id: `${chatId}-m-${seq}`,
    text: `message ${seq}, edited`,
  });
}

/** Shows version `position` of the message `messageId` (POST /api/chats/[id]/branches). */
function switchVersion(
  database: Database,
  browser: Browser,
  chatId: string,
  messageId: string,
  position: number,
) {
  return call(database, branchesRoute.POST, {
    path: `/api/chats/${chatId}/branches`,
    method: "POST",
    body: { messageId, position },
    params: { id: chatId },
    browser,
  });
}

describeEachDriver("chats longer than one statement can write", (use, driver) => {
  it("shows the version before an edit again, all of its messages", async () => {
    const database = use();
    const { browser } = await register(database, "long-switch@example.com");
    const chatId = await newChat(database, browser);
    await seedLongChat(database, chatId, LONG);
    const first = `${chatId}-m-0`;
    // The first message edited: the whole chat after it becomes the earlier version.
    const edited = await editSeeded(database, browser, chatId, 0);
    expect(edited.response.status).toBe(200);
    expect(await loadHistory(database.db, chatId)).toHaveLength(2);

    const switched = await switchVersion(database, browser, chatId, first, 1);
    expect(switched.status).toBe(200);
    const history = await loadHistory(database.db, chatId);
    expect(history).toHaveLength(LONG);
    expect(history.at(-1)?.id).toBe(`${chatId}-m-${LONG - 1}`);
  });

  it(
    "switches back and forth between versions whose messages are more than a statement can name",
    async () => {
      const database = use();
      const { browser } = await register(database, "longer-switch@example.com");
      const chatId = await newChat(database, browser);
      await seedLongChat(database, chatId, LONGER_THAN_BINDS);
      const first = `${chatId}-m-0`;
      const edited = await editSeeded(database, browser, chatId, 0);
      expect(edited.response.status).toBe(200);
      const switchTo = (position: number) =>
        switchVersion(database, browser, chatId, first, position);

      // Back to the long version: its messages are looked for before they are restored.
      expect((await switchTo(1)).status).toBe(200);
      expect(await loadHistory(database.db, chatId)).toHaveLength(LONGER_THAN_BINDS);
      // And away from it again: its messages are taken out of the chat.
      expect((await switchTo(2)).status).toBe(200);
      const shown = await loadHistory(database.db, chatId);
      expect(shown.map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(JSON.stringify(shown[0]?.parts)).toContain("message 0, edited");
    },
    LONGER_THAN_BINDS_TIMEOUT_MS,
  );

  it("answers a switch near the end of a long chat with the newest page, not the whole chat", async () => {
    const database = use();
    const { browser } = await register(database, "long-switch-page@example.com");
    const chatId = await newChat(database, browser);
    await seedLongChat(database, chatId, 1_000);
    const anchor = `${chatId}-m-990`;
    const edited = await editSeeded(database, browser, chatId, 990);
    expect(edited.response.status).toBe(200);

    const switched = await switchVersion(database, browser, chatId, anchor, 1);
    expect(switched.status).toBe(200);
    const answer = (await switched.json()) as {
      messages: Array<{ id: string }>;
      hasMore: boolean;
    };
    // The newest page, the switched message in it; the rest is there to scroll up to.
    expect(answer.messages.map((m) => m.id)).toEqual(
      Array.from({ length: PAGE_DEFAULT_LIMIT }, (_, i) => `${chatId}-m-${950 + i}`),
    );
    expect(answer.hasMore).toBe(true);
    expect(await loadHistory(database.db, chatId)).toHaveLength(1_000);

    // A switch of the first message answers from it on: the whole chat, nothing above it.
    await editSeeded(database, browser, chatId, 0);
    const first = await switchVersion(database, browser, chatId, `${chatId}-m-0`, 1);
    const whole = (await first.json()) as { messages: unknown[]; hasMore: boolean };
    expect(whole.messages).toHaveLength(1_000);
    expect(whole.hasMore).toBe(false);
  });

  // Postgres' own limit; PGlite would hold the 280 MB in its WebAssembly memory first.
  it.runIf(driver === "pg")(
    "refuses, with a clear 413 and nothing changed, a regenerate or an edit whose later messages are too large to keep as a version",
    async () => {
      const database = use();
      const { browser } = await register(database, "huge-tail@example.com");
      const chatId = await newChat(database, browser);
      // 2,800 messages near the length cap after the first: over 256 MB, one version's limit.
      const count = 2_800;
      await seedLongChat(database, chatId, count, {
        text: (seq) => `message ${seq} `.padEnd(99_000, "lorem ipsum "),
        batch: 50,
      });

      const regenerated = await postRegenerate(database, browser, {
        chatId,
        modelId: MODEL,
        messageId: `${chatId}-m-1`,
      });
      expect(regenerated.status).toBe(413);
      const body = (await regenerated.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("payload_too_large:version");
      expect(body.error.message).toContain("Nothing was changed");
      const edited = await postTurn(database, browser, {
        chatId,
        modelId: MODEL,
        id: `${chatId}-m-0`,
        text: "message 0, edited",
      });
      expect(edited.status).toBe(413);
      const history = await loadHistory(database.db, chatId);
      expect(history).toHaveLength(count);
      expect(JSON.stringify(history[0]?.parts)).not.toContain("edited");
    },
    120_000,
  );

  it("continues in a new chat with every message its summary does not hold", async () => {
    const database = use();
    const { browser } = await register(database, "long-continue@example.com");
    const chatId = await newChat(database, browser);
    await seedLongChat(database, chatId, LONG);
    // A summary of nothing yet folded (no watermark): every message comes along.
    await database.db
      .update(chat)
      .set({ contextSummary: "The user counted messages, one by one." })
      .where(eq(chat.id, chatId));

    const response = await continueCall(database, browser, chatId);
    expect(response.status).toBe(201);
    const { chat: created } = (await response.json()) as { chat: { id: string } };
    expect(await loadHistory(database.db, created.id)).toHaveLength(LONG);
  });
});
