import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible HTTP server, configured as Fold's provider before Fold loads.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({ models: [{ id: "fake-model", maxModelLen: 32_768 }] });
});

import * as chatApi from "@/app/api/chat/route";
import * as chatRoute from "@/app/api/chats/[id]/route";
import { acquireLease, releaseLease } from "@/lib/db/queries/leases";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { call } from "../../helpers/http";
import { newChat } from "../../helpers/turns";
import { readChunks } from "../../helpers/ui-stream";

const MODEL = "fake:fake-model";
const TURNS = 50;

afterAll(() => fake.close());
beforeEach(() => fake.reset());

describeEachDriver("turns back to back (DESIGN §16: stored before the stream ends)", (use) => {
  it("accepts every message sent the moment the previous reply ends, and shows each reply at once", async () => {
    const database = use();
    const { browser } = await register(database, "back-to-back@example.com");
    const chatId = await newChat(database, browser);
    const statuses: number[] = [];
    for (let turn = 0; turn < TURNS; turn++) {
      fake.script({ text: `Reply number ${turn}.` });
      const response = await call(database, chatApi.POST, {
        path: "/api/chat",
        method: "POST",
        body: {
          trigger: "submit-message",
          chatId,
          modelId: MODEL,
          message: {
            id: `u-${turn}`,
            role: "user",
            parts: [{ type: "text", text: `Turn ${turn}` }],
          },
        },
        browser,
      });
      statuses.push(response.status);
      if (!response.ok) continue;
      await readChunks(response);
      // The moment the stream has ended: the chat is free and the reply is stored.
      expect(await isTurnActive(database.db, chatId)).toBe(false);
      const shown = await call(database, chatRoute.GET, {
        path: `/api/chats/${chatId}`,
        params: { id: chatId },
        browser,
      });
      const { messages, replying } = (await shown.json()) as {
        replying: boolean;
        messages: Array<{ role: string; parts: Array<{ type: string; text?: string }> }>;
      };
      expect(replying).toBe(false);
      const last = messages.at(-1);
      expect(last?.role).toBe("assistant");
      expect(last?.parts.some((p) => p.text === `Reply number ${turn}.`)).toBe(true);
    }
    expect(statuses.filter((s) => s === 409)).toEqual([]);
    expect(statuses.every((s) => s === 200)).toBe(true);
  });

  it("tells a page opened mid-reply that a reply is being written, so it does not offer another", async () => {
    const database = use();
    const { browser } = await register(database, "mid-reply@example.com");
    const chatId = await newChat(database, browser);
    const show = async () =>
      (await (
        await call(database, chatRoute.GET, {
          path: `/api/chats/${chatId}`,
          params: { id: chatId },
          browser,
        })
      ).json()) as { replying: boolean };
    expect((await show()).replying).toBe(false);
    const lease = await acquireLease(database.db, chatId, 30_000);
    if (!lease) throw new Error("the lease was not free");
    expect((await show()).replying).toBe(true);
    await releaseLease(database.db, lease);
    expect((await show()).replying).toBe(false);
  });
});
