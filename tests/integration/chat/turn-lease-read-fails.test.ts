import { afterEach, beforeAll, expect, it, vi } from "vitest";
import { acquireLease, releaseLease } from "@/lib/db/queries/leases";
import * as userQueries from "@/lib/db/queries/users";
import { takeChatForTurn } from "@/lib/turn/lease";
import { register, sessionOf } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { newChat } from "../../helpers/turns";

afterEach(() => vi.restoreAllMocks());

describeEachDriver("a turn that waited for its chat", (use) => {
  beforeAll(() => register(use(), "ada@example.com"));

  it("frees the chat when reading it again fails, so the next message is not refused as busy", async () => {
    const database = use();
    const { browser } = await register(database, "ben@example.com");
    const userId = (await sessionOf(database, browser))?.user.id;
    if (!userId) throw new Error("not signed in");
    const chatId = await newChat(database, browser);
    // Another tab's turn holds the chat; this one waits for it.
    const first = await acquireLease(database.db, chatId, 30_000);
    if (!first) throw new Error("the chat's lease was not free");
    const read = vi
      .spyOn(userQueries, "findUser")
      .mockRejectedValueOnce(new Error("the database went away for a moment"));
    const waiting = takeChatForTurn(database.db, userId, chatId);
    await releaseLease(database.db, first);

    await expect(waiting).rejects.toThrow("the database went away");
    expect(read).toHaveBeenCalled();
    expect(await isTurnActive(database.db, chatId)).toBe(false);
    // The next turn takes the chat at once.
    const next = await takeChatForTurn(database.db, userId, chatId);
    await next.lease.release();
  });
});
