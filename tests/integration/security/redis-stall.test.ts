import { afterAll, expect, it, vi } from "vitest";

// Redis that stops answering without closing anything (a paused process, a network that drops
// packets): Fold's commands to it would wait forever. The chat must not.
const { fake, proxy } = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  const { startStallingRedis } = await import("../../helpers/stalling-proxy");
  const proxy = await startStallingRedis();
  const fake = await startFakeProvider(
    { models: [{ id: "fake-model", maxModelLen: 16_384 }] },
    // The turn limit on, so the rate limiter's Redis is in the way too.
    { REDIS_URL: proxy.url, RATE_LIMIT_TURNS_PER_MINUTE: "100" },
  );
  return { fake, proxy };
});

import * as stopRoute from "@/app/api/chats/[id]/stop/route";
import * as streamRoute from "@/app/api/chats/[id]/stream/route";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { call } from "../../helpers/http";
import { newChat, postTurn, shownChat } from "../../helpers/turns";
import { eventually, readChunks, textOf } from "../../helpers/ui-stream";

const MODEL = "fake:fake-model";

afterAll(async () => {
  await proxy.close();
  await fake.close();
});

describeEachDriver("while Redis stops answering", (use, driver) => {
  it("turns are answered, stored and free their chat; Stop says it cannot; all of it works again once Redis answers", async () => {
    const database = use();
    const { browser } = await register(database, `redis-stall-${driver}@example.com`);
    const chatId = await newChat(database, browser);
    const stopBody = { messageId: "u-anything" };
    const stop = () =>
      call(database, stopRoute.POST, {
        path: `/api/chats/${chatId}/stop`,
        method: "POST",
        params: { id: chatId },
        body: stopBody,
        browser,
      });
    const turn = async (text: string) => {
      const response = await postTurn(database, browser, { chatId, modelId: MODEL, text });
      expect(response.status).toBe(200);
      const chunks = await readChunks(response);
      expect(chunks.some((c) => c.type === "error")).toBe(false);
      expect(textOf(chunks).length).toBeGreaterThan(0);
      await eventually(async () => !(await isTurnActive(database.db, chatId)));
    };

    // Connected and answering first, so the stall hits connections already in use.
    await turn("Hello");
    expect((await stop()).ok).toBe(true);

    proxy.stall();
    await turn("Are you there?");
    await turn("Still there?");
    const { messages } = await shownChat(database, browser, chatId);
    expect(messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);

    const refused = await stop();
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { code: "unavailable:live" } });
    const resume = await call(database, streamRoute.GET, {
      path: `/api/chats/${chatId}/stream`,
      params: { id: chatId },
      browser,
    });
    expect(resume.status).toBe(204);

    // Redis answers again: Stop reaches it once the clients have reconnected.
    proxy.recover();
    await eventually(async () => (await stop()).ok, 15_000);
    await turn("Back?");
  });
});
