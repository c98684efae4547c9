import { afterAll, beforeEach, expect, it, vi } from "vitest";

const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({ models: [{ id: "fake-model", maxModelLen: 16_384 }] });
});

// Tier 1 holds the turn once it has looked for a stop for the last time (as its projection of a
// long chat, or a fold's commit, can), until the user's Stop has reached the turn.
const tier1 = vi.hoisted(() => {
  const gate = {
    looked: Promise.resolve(),
    done: () => {},
    /** A new turn's gate: `looked` resolves once its Tier 1 has looked. */
    reset() {
      gate.looked = new Promise<void>((resolve) => {
        gate.done = resolve;
      });
    },
  };
  return gate;
});
vi.mock("@/lib/chat/compact", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/chat/compact")>();
  return {
    ...actual,
    compactChat: async (...args: Parameters<typeof actual.compactChat>) => {
      const outcome = await actual.compactChat(...args);
      tier1.done();
      const signal = args[1].signal;
      for (let waited = 0; waited < 5_000 && !signal?.aborted; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return outcome;
    },
  };
});

import * as stopRoute from "@/app/api/chats/[id]/stop/route";
import { usageOn } from "@/lib/db/queries/usage";
import { usageDayOf } from "@/lib/limits/quota-day";
import { register, sessionOf } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { call } from "../../helpers/http";
import { newChat, postTurn, shownChat } from "../../helpers/turns";
import { eventually, readChunks } from "../../helpers/ui-stream";

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  tier1.reset();
});

describeEachDriver("a Stop heard after Tier 1's last look, before the model call", (use) => {
  it("calls no model, stores no reply, charges no tokens and gives the message back", async () => {
    const database = use();
    const { browser } = await register(database, "stop-before-model@example.com");
    const chatId = await newChat(database, browser);
    const userId = (await sessionOf(database, browser))?.user.id ?? "";
    const day = usageDayOf(new Date());
    const before = await usageOn(database.db, userId, day);
    const messageId = `u-${crypto.randomUUID()}`;
    const response = await postTurn(database, browser, {
      chatId,
      modelId: "fake:fake-model",
      text: "Tell me a long story.",
      id: messageId,
    });
    expect(response.status).toBe(200);
    await tier1.looked;
    const stop = await call(database, stopRoute.POST, {
      path: `/api/chats/${chatId}/stop`,
      method: "POST",
      params: { id: chatId },
      body: { messageId },
      browser,
    });
    expect(stop.status).toBe(202);
    const chunks = await readChunks(response);
    await eventually(async () => !(await isTurnActive(database.db, chatId)));

    expect(fake.requests).toHaveLength(0);
    expect(chunks.filter((c) => c.type === "text-delta")).toEqual([]);
    expect(chunks.at(-1)).toMatchObject({ type: "finish", messageMetadata: { stopped: true } });
    const stored = await shownChat(database, browser, chatId);
    expect(stored.messages.map((m) => m.role)).toEqual(["user"]);
    // Nothing answered the message: it goes back to the day, and no prompt was charged.
    expect(await usageOn(database.db, userId, day)).toEqual(before);
  });
});
