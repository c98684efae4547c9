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
import { loadHistory } from "@/lib/db/queries/messages";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { queryRows } from "../../helpers/db";
import { newChat, postTurn } from "../../helpers/turns";
import { eventually, readUntilText } from "../../helpers/ui-stream";

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
});
