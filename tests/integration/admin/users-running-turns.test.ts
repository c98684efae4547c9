import { afterEach, beforeAll, expect, it, vi } from "vitest";
import * as userRoute from "@/app/api/admin/users/[id]/route";
import { holdLease } from "@/lib/chat/lease";
import type { Database } from "@/lib/db/client";
import * as chatQueries from "@/lib/db/queries/chats";
import { acquireLease, releaseLease } from "@/lib/db/queries/leases";
import * as userQueries from "@/lib/db/queries/users";
import { findUser } from "@/lib/db/queries/users";
import type { AppError } from "@/lib/errors";
import { liveBus } from "@/lib/live/bus";
import { listenForStop, watchStop } from "@/lib/live/stop";
import { takeChatForTurn } from "@/lib/turn/lease";
import { register, sessionOf, signIn } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";
import { newChat } from "../../helpers/turns";
import { eventually } from "../../helpers/ui-stream";

// A running turn is its chat's lease plus a listener on the chat's stop channel (lib/turn's
// runTurn holds both); here they are taken directly, so the test needs no model.

async function idOf(database: Database, browser: Browser): Promise<string> {
  const session = await sessionOf(database, browser);
  if (!session) throw new Error("not signed in");
  return session.user.id;
}

/** A user with one chat whose turn runs and one that is idle; which of them heard a stop. */
async function userWithRunningTurn(database: Database, email: string) {
  const { browser } = await register(database, email);
  const userId = await idOf(database, browser);
  const running = await newChat(database, browser);
  const idle = await newChat(database, browser);
  expect(await acquireLease(database.db, running, 30_000)).not.toBeNull();
  const stopped: string[] = [];
  const unwatch = await Promise.all(
    [running, idle].map((chatId) =>
      watchStop(liveBus(), chatId, undefined, () => stopped.push(chatId)),
    ),
  );
  return { userId, running, stopped, unwatch: () => Promise.all(unwatch.map((u) => u())) };
}

const disable = (database: Database, admin: Browser, id: string) =>
  call(database, userRoute.PATCH, {
    path: `/api/admin/users/${id}`,
    method: "PATCH",
    body: { status: "disabled" },
    params: { id },
    browser: admin,
  });

const remove = (database: Database, admin: Browser, id: string) =>
  call(database, userRoute.DELETE, {
    path: `/api/admin/users/${id}`,
    method: "DELETE",
    params: { id },
    browser: admin,
  });

afterEach(() => vi.restoreAllMocks());

describeEachDriver(
  "Admin → Users: a disabled or deleted account's running turns",
  (use, driver) => {
    // The first account is the admin.
    beforeAll(() => register(use(), "ada@example.com"));

    it("disabling a user stops the turn running on their chat, and only that chat", async () => {
      const database = use();
      const ada = await signIn(database, "ada@example.com");
      const bob = await userWithRunningTurn(database, "bob@example.com");

      expect((await disable(database, ada.browser, bob.userId)).status).toBe(200);
      await eventually(async () => bob.stopped.length > 0, 2_000);
      // Delivered after the publisher moves on: a stop for the idle chat would have come too.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(bob.stopped).toEqual([bob.running]);
      await bob.unwatch();
    });

    it("deleting a user stops the turn running on their chat", async () => {
      const database = use();
      const ada = await signIn(database, "ada@example.com");
      const carol = await userWithRunningTurn(database, "carol@example.com");

      expect((await remove(database, ada.browser, carol.userId)).status).toBe(204);
      await eventually(async () => carol.stopped.length > 0, 2_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(carol.stopped).toEqual([carol.running]);
      await carol.unwatch();
    });

    // PGlite has one connection: a turn on another could not run during the delete.
    it.skipIf(driver === "pglite")(
      "a turn that takes its chat while the account is being deleted is stopped or finds no chat",
      async () => {
        const database = use();
        const ada = await signIn(database, "ada@example.com");
        const { browser } = await register(database, "hal@example.com");
        const halId = await idOf(database, browser);
        const chatId = await newChat(database, browser);
        const stopped: string[] = [];
        const unwatch = await watchStop(liveBus(), chatId, undefined, () => stopped.push(chatId));
        // A turn of Hal's, its session checked a moment before, takes the chat (on another
        // connection) while the delete's transaction runs.
        let taking: Promise<boolean> | undefined;
        const deleteRow = userQueries.deleteUserRow;
        vi.spyOn(userQueries, "deleteUserRow").mockImplementation(async (tx, id) => {
          taking = takeChatForTurn(database.db, halId, chatId).then(
            () => true,
            () => false,
          );
          await new Promise((resolve) => setTimeout(resolve, 300));
          return deleteRow(tx, id);
        });

        expect((await remove(database, ada.browser, halId)).status).toBe(204);
        const took = await taking;
        if (took) await eventually(async () => stopped.length > 0, 2_000);
        expect({ took, stopped: stopped.length > 0 }).toEqual({ took, stopped: took === true });
        await unwatch();
      },
    );

    it("a turn admitted before the disable but not yet listening is stopped once it listens", async () => {
      const database = use();
      const ada = await signIn(database, "ada@example.com");
      const { browser } = await register(database, "erin@example.com");
      const erinId = await idOf(database, browser);
      const chatId = await newChat(database, browser);
      // Admitted: the chat's lease is the turn's; it listens only once it has prepared.
      expect(await acquireLease(database.db, chatId, 30_000)).not.toBeNull();

      expect((await disable(database, ada.browser, erinId)).status).toBe(200);
      const stopped: string[] = [];
      const unwatch = listenForStop(liveBus(), chatId, { messageId: "u-1" }, () =>
        stopped.push(chatId),
      );
      await eventually(async () => stopped.length > 0, 2_000);
      expect(stopped).toEqual([chatId]);
      await unwatch();
    });

    it("a turn of a disabled account that passed its session check takes no chat, waiting for it or not", async () => {
      const database = use();
      const ada = await signIn(database, "ada@example.com");
      const { browser } = await register(database, "gil@example.com");
      const gilId = await idOf(database, browser);
      const [busy, free] = [await newChat(database, browser), await newChat(database, browser)];
      // A second tab's turn waits for the chat the first tab's turn holds.
      const first = await acquireLease(database.db, busy, 30_000);
      if (!first) throw new Error("the chat's lease was not free");
      const waiting = takeChatForTurn(database.db, gilId, busy).then(
        () => "taken",
        (error: AppError) => error.code,
      );
      expect((await disable(database, ada.browser, gilId)).status).toBe(200);
      // The first turn stops on the admin's word and frees the chat: the waiting one is refused.
      await releaseLease(database.db, first);
      expect(await waiting).toBe("forbidden:account_disabled");
      // A turn on an idle chat, its session checked before the disable, is refused as well.
      await expect(takeChatForTurn(database.db, gilId, free)).rejects.toMatchObject({
        code: "forbidden:account_disabled",
      });
      // Neither left the chat held.
      for (const chatId of [busy, free])
        expect(await isTurnActive(database.db, chatId)).toBe(false);
    });

    it("a Compact now, a summary edit or a switch of a disabled account that waited for its chat takes no chat", async () => {
      const database = use();
      const ada = await signIn(database, "ada@example.com");
      const { browser } = await register(database, "hal@example.com");
      const halId = await idOf(database, browser);
      const chatId = await newChat(database, browser);
      // Such a write waits for the chat the turn of another tab holds (lib/chat/lease.ts).
      const first = await acquireLease(database.db, chatId, 30_000);
      if (!first) throw new Error("the chat's lease was not free");
      const waiting = holdLease(database.db, chatId, "busy").then(
        async (held) => {
          await held.release();
          return "taken";
        },
        (error: AppError) => error.code,
      );
      expect((await disable(database, ada.browser, halId)).status).toBe(200);
      // The turn stops on the admin's word and frees the chat: the waiting write is refused.
      await releaseLease(database.db, first);
      expect(await waiting).toBe("forbidden:account_disabled");
      expect(await isTurnActive(database.db, chatId)).toBe(false);
    });

    it("a disable whose running turns cannot be read still succeeds", async () => {
      const database = use();
      const ada = await signIn(database, "ada@example.com");
      const { browser } = await register(database, "fay@example.com");
      const fayId = await idOf(database, browser);
      const read = vi
        .spyOn(chatQueries, "busyChatIdsOf")
        .mockRejectedValue(new Error("the database went away for a moment"));

      expect((await disable(database, ada.browser, fayId)).status).toBe(200);
      expect(read).toHaveBeenCalled();
      expect((await findUser(database.db, fayId))?.status).toBe("disabled");
    });

    it("a bus that cannot deliver the stop does not fail the disable", async () => {
      const database = use();
      const ada = await signIn(database, "ada@example.com");
      const dan = await userWithRunningTurn(database, "dan@example.com");
      const publish = vi
        .spyOn(liveBus().publisher, "publish")
        .mockRejectedValue(new Error("the live bus's Redis is unavailable"));

      expect((await disable(database, ada.browser, dan.userId)).status).toBe(200);
      expect(publish).toHaveBeenCalled();
      expect((await findUser(database.db, dan.userId))?.status).toBe("disabled");
      await dan.unwatch();
    });
  },
);
