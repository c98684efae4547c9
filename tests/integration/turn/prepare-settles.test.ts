import { expect, it, vi } from "vitest";

// The history read can be made to fail, and the message's write to take a while.
const faults = vi.hoisted(() => ({ failHistoryRead: false, appendDelayMs: 0 }));
vi.mock("@/lib/db/queries/messages", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/db/queries/messages")>();
  return {
    ...actual,
    loadTurnHistory: (...args: Parameters<typeof actual.loadTurnHistory>) =>
      faults.failHistoryRead
        ? Promise.reject(new Error("the history could not be read"))
        : actual.loadTurnHistory(...args),
    appendIfNewAndNote: async (...args: Parameters<typeof actual.appendIfNewAndNote>) => {
      await new Promise((resolve) => setTimeout(resolve, faults.appendDelayMs));
      return actual.appendIfNewAndNote(...args);
    },
  };
});

import { eq } from "drizzle-orm";
import { createChat, getChat } from "@/lib/db/queries/chats";
import { loadHistory } from "@/lib/db/queries/messages";
import { user } from "@/lib/db/schema";
import { AppliedRequestError, prepareTurn } from "@/lib/turn/prepare";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";

/**
 * A turn that cannot start fails, and the chat is freed for the next one. A new message's
 * history is read beside the statement that stores it: when the read fails, the failure waits
 * for that write to end, so nothing of the failed turn is written once its chat is free
 * (another turn may hold it by then).
 */
describeEachDriver("a turn whose history read fails beside its message's write", (use) => {
  it("is refused only once the write is done", async () => {
    const database = use();
    await register(database, "settles@example.com");
    const [account] = await database.db
      .select()
      .from(user)
      .where(eq(user.email, "settles@example.com"));
    if (!account) throw new Error("no user");
    const listing = await createChat(database.db, { userId: account.id, title: "Under way" });
    const chat = await getChat(database.db, listing.id);
    if (!chat) throw new Error("no chat");
    faults.failHistoryRead = true;
    faults.appendDelayMs = 300;
    try {
      const refusal = await prepareTurn(
        database.db,
        chat,
        {
          trigger: "submit-message",
          chatId: chat.id,
          message: { id: "u-settles", role: "user", parts: [{ type: "text", text: "hello" }] },
        },
        "demo:fold-demo",
      ).then(
        () => null,
        (error: unknown) => error,
      );
      // The message was stored: the failure comes after the request was applied, and says so.
      expect(refusal).toBeInstanceOf(AppliedRequestError);
      expect(String((refusal as Error).cause)).toMatch(/could not be read/);
      // Refused after the write ended, not while it still ran.
      expect((await loadHistory(database.db, chat.id)).map((m) => m.id)).toEqual(["u-settles"]);
    } finally {
      faults.failHistoryRead = false;
      faults.appendDelayMs = 0;
    }
  });
});
