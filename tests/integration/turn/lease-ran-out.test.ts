import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A provider that streams slowly enough to act while the reply is on its way.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({
    models: [{ id: "fake-model", maxModelLen: 16_384 }],
    chunkDelayMs: 20,
    chunkChars: 6,
    replyTokens: 120,
  });
});

import { sql } from "drizzle-orm";
import { getLanguageModel } from "@/lib/ai/providers";
import type { HeldLease } from "@/lib/chat/lease";
import { withDatabase } from "@/lib/db/client";
import { getChat } from "@/lib/db/queries/chats";
import { loadHistory } from "@/lib/db/queries/messages";
import { holdTurnLease } from "@/lib/turn/lease";
import { runTurn } from "@/lib/turn/run-turn";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive, queryRows } from "../../helpers/db";
import { newChat, postTurn } from "../../helpers/turns";
import { eventually, readChunks, readUntilText } from "../../helpers/ui-stream";

const MODEL = "fake:fake-model";

afterAll(() => fake.close());
beforeEach(() => fake.reset());

/**
 * A turn's lease is renewed every ten seconds; a process that stalls past its thirty (or a
 * database clock that jumps) lets it run out with no renewal there to notice, and another turn
 * may take the chat meanwhile. The reply of the first must not land in that turn's chat.
 */
describeEachDriver("a turn whose lease ran out unnoticed", (use) => {
  it("stores no reply, says so, and leaves the new holder's lease alone", async () => {
    const database = use();
    const { db } = database;
    const { browser } = await register(database, "lease-ran-out@example.com");
    const chatId = await newChat(database, browser);

    const response = await postTurn(database, browser, { chatId, modelId: MODEL, text: "hi" });
    const { seen: chunks, rest } = await readUntilText(response, 12);
    // The lease ran out and another turn took the chat: its token is on the row now.
    const [taken] = await queryRows<{ until: string }>(
      db,
      sql`update chat set active_turn_until = date_trunc('milliseconds', now() + interval '30 seconds')
          where id = ${chatId} returning active_turn_until::text as until`,
    );
    for await (const chunk of rest) chunks.push(chunk);

    // The browser saw the reply: it is told it was not kept, not shown it as answered.
    expect(chunks.some((chunk) => chunk.type === "finish")).toBe(false);
    const last = chunks.at(-1) as { type: string; errorText?: string };
    expect(last.type).toBe("error");
    expect(last.errorText).toMatch(/could not be saved.*taken over/);
    // Nothing of it stored; the other turn's lease is still on the row.
    await eventually(async () => {
      const [row] = await queryRows<{ until: string }>(
        db,
        sql`select active_turn_until::text as until from chat where id = ${chatId}`,
      );
      return row?.until === taken?.until;
    });
    expect((await loadHistory(db, chatId)).map((m) => m.role)).toEqual(["user"]);
  });

  it("frees the chat after a turn whose lease was given up but came back (a renewal answered late)", async () => {
    const database = use();
    const { db } = database;
    const { browser } = await register(database, "lease-came-back@example.com");
    const chatId = await newChat(database, browser);
    const chat = await getChat(db, chatId);
    if (!chat) throw new Error("no chat");
    // What keepRenewing leaves when renewals went unanswered until the lease nearly ran out and
    // one then landed: the lease given up (lost), its token still on the chat's row.
    const taken = await holdTurnLease(db, chatId);
    const gaveUp = new AbortController();
    gaveUp.abort();
    const held: HeldLease = { ...taken, lost: gaveUp.signal };
    await withDatabase(database, async () => {
      const response = await runTurn(
        { db, resolveModel: getLanguageModel, defaultModelId: async () => MODEL },
        chat,
        {
          trigger: "submit-message",
          chatId,
          message: { id: "came-back-1", role: "user", parts: [{ type: "text", text: "hi" }] },
        },
        held,
      );
      await readChunks(response);
    });
    // The turn stored no reply and ended; the chat is free for the next one, not held by the
    // lease that came back until it runs out.
    await eventually(async () => !(await isTurnActive(db, chatId)), 5_000);
    expect((await loadHistory(db, chatId)).map((m) => m.role)).not.toContain("assistant");
  });
});
