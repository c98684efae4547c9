import { afterAll, beforeEach, expect, it, vi } from "vitest";

// Redis configured but down (nothing listens on port 1): every instance-sharing feature is
// unavailable, the chat itself must not be.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(
    { models: [{ id: "fake-model", maxModelLen: 16_384 }] },
    { REDIS_URL: "redis://127.0.0.1:1" },
  );
});

import * as stopRoute from "@/app/api/chats/[id]/stop/route";
import * as streamRoute from "@/app/api/chats/[id]/stream/route";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { call } from "../../helpers/http";
import { newChat, postTurn, shownChat } from "../../helpers/turns";
import { eventually, readChunks, readUntilText, textOf } from "../../helpers/ui-stream";

const MODEL = "fake:fake-model";

afterAll(() => fake.close());
beforeEach(() => fake.reset());

describeEachDriver("while Redis is down", (use) => {
  it("a turn is answered and stored, and the chat is freed; Stop and resume say what they cannot do", async () => {
    const database = use();
    const { browser } = await register(database, "redis-down@example.com");
    const chatId = await newChat(database, browser);

    const response = await postTurn(database, browser, { chatId, modelId: MODEL, text: "Hi" });
    expect(response.status).toBe(200);
    const chunks = await readChunks(response);
    expect(chunks.some((c) => c.type === "error")).toBe(false);
    expect(textOf(chunks).length).toBeGreaterThan(0);
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    const { messages } = await shownChat(database, browser, chatId);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);

    // A second turn does not wait for Redis again.
    const second = await postTurn(database, browser, { chatId, modelId: MODEL, text: "Again" });
    expect(second.status).toBe(200);
    await readChunks(second);

    const stop = await call(database, stopRoute.POST, {
      path: `/api/chats/${chatId}/stop`,
      method: "POST",
      params: { id: chatId },
      body: { messageId: "u-anything" },
      browser,
    });
    expect(stop.status).toBe(503);
    expect(await stop.json()).toMatchObject({
      error: { code: "unavailable:live", message: expect.stringMatching(/Redis/) },
    });

    const resume = await call(database, streamRoute.GET, {
      path: `/api/chats/${chatId}/stream`,
      params: { id: chatId },
      browser,
    });
    expect(resume.status).toBe(204);
  });
  it("Stop still stops a reply running on the instance it reaches: the model call ends, the reply is stored as stopped", async () => {
    const database = use();
    const { browser } = await register(database, "redis-down-stop@example.com");
    const chatId = await newChat(database, browser);
    fake.configure({ chunkDelayMs: 25, chunkChars: 6, replyTokens: 300 });
    const messageId = `u-${crypto.randomUUID()}`;
    const attemptId = `a-${crypto.randomUUID()}`;
    const response = await postTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Tell me a long story.",
      id: messageId,
      attemptId,
    });
    expect(response.status).toBe(200);
    const { seen: chunks, rest } = await readUntilText(response, 30);

    const stop = await call(database, stopRoute.POST, {
      path: `/api/chats/${chatId}/stop`,
      method: "POST",
      params: { id: chatId },
      body: { messageId, attemptId },
      browser,
    });
    expect(stop.status).toBe(202);
    for await (const chunk of rest) chunks.push(chunk);
    const finish = chunks.find((chunk) => chunk.type === "finish") as {
      messageMetadata?: { stopped?: boolean };
    };
    expect(finish.messageMetadata?.stopped).toBe(true);
    await eventually(async () => fake.requests.at(-1)?.abortedAt != null);
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    const { messages } = await shownChat(database, browser, chatId);
    expect(messages.at(-1)?.metadata?.stopped).toBe(true);
    // Far short of the 300-token reply.
    expect(textOf(chunks).length).toBeLessThan(600);
  });
});
