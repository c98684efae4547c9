import { afterAll, beforeEach, expect, it, vi } from "vitest";

const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, { COMPACTION_BACKGROUND: "false" });
});

// Runs a hook the moment an edit has found the message it rewrites (the turn holds the lease).
const hook = vi.hoisted(() => ({ onFound: undefined as (() => Promise<void>) | undefined }));
vi.mock("@/lib/db/queries/messages", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/db/queries/messages")>();
  return {
    ...actual,
    findMessageAnywhere: async (...args: Parameters<typeof actual.findMessageAnywhere>) => {
      const found = await actual.findMessageAnywhere(...args);
      const run = hook.onFound;
      hook.onFound = undefined;
      await run?.();
      return found;
    },
  };
});

import * as branchesRoute from "@/app/api/chats/[id]/branches/route";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { call } from "../../helpers/http";
import { deleteChat, newChat, postTurn, sendTurn } from "../../helpers/turns";
import { eventually, readChunks } from "../../helpers/ui-stream";

const MODEL = "fake:small";
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describeEachDriver("two tabs: delete vs a confirmed edit", (use) => {
  it("an edit whose chat another tab deleted as it began answers 404 (chat deleted), not 409 'went on'", async () => {
    const database = use();
    const { browser } = await register(database, "delete-edit@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "first", id: "u0" });
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "second", id: "u1" });
    // Tab A asks how much an edit of u0 moves (the edit names the chat's last message then).
    const asked = await call(database, branchesRoute.GET, {
      path: `/api/chats/${chatId}/branches?messageId=u0`,
      params: { id: chatId },
      browser,
    });
    const { edit } = (await asked.json()) as { edit: { throughId: string } };
    // Tab B deletes the chat just as tab A's confirmed edit begins.
    hook.onFound = async () => {
      expect((await deleteChat(database, browser, chatId)).status).toBe(204);
    };
    const response = await postTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "first, edited",
      id: "u0",
      throughId: edit.throughId,
    });
    const body = response.ok ? null : ((await response.json()) as { error: { code: string } });
    if (response.ok) await readChunks(response);
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    expect({ status: response.status, code: body?.error.code }).toEqual({
      status: 404,
      code: "not_found:chat",
    });
  });
});
