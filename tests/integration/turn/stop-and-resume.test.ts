import { randomUUID } from "node:crypto";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";

// A provider that streams slowly, and Redis as the bus between instances, set before Fold loads.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(
    {
      models: [{ id: "fake-model", maxModelLen: 16_384 }],
      chunkDelayMs: 25,
      chunkChars: 6,
      replyTokens: 300,
    },
    {
      REDIS_URL: process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379",
    },
  );
});

import * as notesRoute from "@/app/api/chats/[id]/memory/notes/route";
import * as stopRoute from "@/app/api/chats/[id]/stop/route";
import * as streamRoute from "@/app/api/chats/[id]/stream/route";
import { countTextTokens } from "@/lib/context/tokens";
import { acquireLease, releaseLease } from "@/lib/db/queries/leases";
import { usageOn } from "@/lib/db/queries/usage";
import { usageDayOf } from "@/lib/limits/quota-day";
import { liveBus, redisBus } from "@/lib/live/bus";
import { requestStop, watchStop } from "@/lib/live/stop";
import { resumeTurnStream } from "@/lib/live/streams";
import { register, sessionOf } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";
import { holdStopChannels } from "../../helpers/stop-channel";
import { newChat, postRegenerate, postTurn, shownChat } from "../../helpers/turns";
import {
  eventually,
  readChunks,
  readUntilText,
  streamChunks,
  textOf,
} from "../../helpers/ui-stream";

const MODEL = "fake:fake-model";
// "Another instance": its own Redis connections, as a second server process would have.
const otherInstance = redisBus(process.env.REDIS_URL ?? "");

afterAll(() => fake.close());
beforeEach(() => fake.reset());

/**
 * Until the chat's running turn listens for Stop (beside its model call, so maybe only after its
 * reply began): a message on its channel that is no stop is heard by it and ignored.
 */
async function listening(chatId: string): Promise<void> {
  await eventually(
    async () => (await otherInstance.publisher.publish(`fold:stop:${chatId}`, "listening?")) === 1,
  );
}

function startTurn(database: Parameters<typeof call>[0], browser: Browser, chatId: string) {
  return postTurn(database, browser, { chatId, modelId: MODEL, text: "Tell me a long story." });
}

function stopWith(
  database: Parameters<typeof call>[0],
  browser: Browser,
  chatId: string,
  body: Record<string, unknown>,
) {
  return call(database, stopRoute.POST, {
    path: `/api/chats/${chatId}/stop`,
    method: "POST",
    params: { id: chatId },
    body,
    browser,
  });
}

describeEachDriver("Stop and resume across instances", (use) => {
  it("a stop sent through another instance aborts the provider request and stores the partial reply as stopped", async () => {
    const database = use();
    const { browser } = await register(database, "stopper@example.com");
    const chatId = await newChat(database, browser);
    const response = await startTurn(database, browser, chatId);
    expect(response.status).toBe(200);

    const { seen: chunks, rest } = await readUntilText(response, 30);
    await listening(chatId);
    const stopSentAt = Date.now();
    expect(await requestStop(otherInstance, chatId)).toBe(1);
    for await (const chunk of rest) chunks.push(chunk);
    const finish = chunks.find((chunk) => chunk.type === "finish") as {
      messageMetadata?: { stopped?: boolean; stats?: { finishReason: string } };
    };
    expect(finish.messageMetadata?.stopped).toBe(true);
    expect(finish.messageMetadata?.stats?.finishReason).toBe("stopped");
    expect(chunks.some((chunk) => chunk.type === "error")).toBe(false);

    // The provider saw its request go away, soon after the stop.
    const [request] = fake.requests;
    // It sees the connection close a moment after Fold lets go of it.
    await eventually(async () => request?.abortedAt != null);
    expect((request?.abortedAt ?? 0) - stopSentAt).toBeLessThan(2_000);

    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    const stored = await shownChat(database, browser, chatId);
    const reply = stored.messages.at(-1);
    expect(reply?.role).toBe("assistant");
    expect(reply?.metadata?.stopped).toBe(true);
    const storedText =
      reply?.parts
        .filter((p) => p.type === "text")
        .map((p) => p.text)
        .join("") ?? "";
    expect(storedText).toBe(textOf(chunks));
    // Partial: the full reply is 300 tokens, far longer than what streamed before the stop.
    expect(storedText.length).toBeGreaterThan(0);
    expect(storedText.length).toBeLessThan(600);
    expect(stored.replying).toBe(false);
    // The provider reported no count for the cut-off call: the day's usage has Fold's estimate
    // of it, at least the question and what was written.
    const user = (await sessionOf(database, browser))?.user;
    const spent = countTextTokens("Tell me a long story.") + countTextTokens(storedText);
    // Recorded in the background, as every call's count is.
    await eventually(
      async () =>
        (await usageOn(database.db, user?.id ?? "", usageDayOf(new Date()))).tokens >= spent,
    );
  });

  it("a reader on another instance joining mid-reply gets the whole reply, from its first chunk", async () => {
    const database = use();
    const { browser } = await register(database, "follower@example.com");
    const chatId = await newChat(database, browser);
    const response = await startTurn(database, browser, chatId);
    const { rest } = await readUntilText(response, 30);
    // Drops the first reader, as a reload does; the turn goes on.
    await rest.return(undefined);
    const resumed = await eventually(() =>
      resumeTurnStream(otherInstance, chatId, "turn", async () => true),
    );
    const followed: Array<Record<string, unknown>> = [];
    for await (const chunk of streamChunks(resumed)) followed.push(chunk);
    expect(followed[0]?.type).toBe("start");
    expect(followed.some((chunk) => chunk.type === "finish")).toBe(true);
    const stored = await shownChat(database, browser, chatId);
    const reply = stored.messages.at(-1);
    expect(reply?.role).toBe("assistant");
    const storedText = reply?.parts
      .filter((p) => p.type === "text")
      .map((p) => p.text)
      .join("");
    expect(textOf(followed)).toBe(storedText);
    // Once the reply is stored there is nothing to resume: the stored history is complete.
    const after = await call(database, streamRoute.GET, {
      path: `/api/chats/${chatId}/stream`,
      params: { id: chatId },
      browser,
    });
    expect(after.status).toBe(204);
  });

  it("a stop that names a message not yet answered stops its turn as soon as it begins, on any instance", async () => {
    const database = use();
    const { browser } = await register(database, "early-stop@example.com");
    const chatId = await newChat(database, browser);
    const messageId = `u-${crypto.randomUUID()}`;
    // Stop first: the message is still on its way, no turn listens yet.
    const stop = await stopWith(database, browser, chatId, { messageId });
    expect(stop.status).toBe(202);

    const response = await postTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Tell me a long story.",
      id: messageId,
    });
    const chunks: Array<Record<string, unknown>> = [];
    if (!response.body) throw new Error(`the turn answered ${response.status}`);
    for await (const chunk of streamChunks(response.body)) chunks.push(chunk);
    const finish = chunks.find((c) => c.type === "finish") as {
      messageMetadata?: { stopped?: boolean };
    };
    expect(finish.messageMetadata?.stopped).toBe(true);
    expect(chunks.some((c) => c.type === "error")).toBe(false);
    // Far short of the 300-token reply: the turn stopped at its start.
    expect(textOf(chunks).length).toBeLessThan(60);
    await eventually(async () => fake.requests.every((request) => request.abortedAt !== null));

    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    // The stop is used up: Retry answers in full.
    const retry = await postRegenerate(database, browser, { chatId, modelId: MODEL });
    expect(retry.status).toBe(200);
    const retried = await readChunks(retry);
    const retriedFinish = retried.find((c) => c.type === "finish") as {
      messageMetadata?: { stopped?: boolean };
    };
    expect(retriedFinish.messageMetadata?.stopped).toBeUndefined();
    expect(textOf(retried).length).toBeGreaterThan(600);
  });

  it("a stop for a message that has its reply leaves nothing behind for the next turn", async () => {
    const database = use();
    const { browser } = await register(database, "late-stop@example.com");
    const chatId = await newChat(database, browser);
    fake.configure({ chunkDelayMs: 0 });
    try {
      const messageId = `u-${crypto.randomUUID()}`;
      const done = await postTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: "A quick one.",
        id: messageId,
      });
      await readChunks(done);
      await eventually(async () => !(await isTurnActive(database.db, chatId)));

      const stop = await stopWith(database, browser, chatId, { messageId });
      expect(stop.status).toBe(200);
      expect(await stop.json()).toEqual({ stopping: false });

      // Regenerating that very message is not stopped by the late Stop.
      const retry = await postRegenerate(database, browser, { chatId, modelId: MODEL });
      const retried = await readChunks(retry);
      const finish = retried.find((c) => c.type === "finish") as {
        messageMetadata?: { stopped?: boolean };
      };
      expect(finish.messageMetadata?.stopped).toBeUndefined();
    } finally {
      fake.configure({ chunkDelayMs: 25 });
    }
  });

  it("a stop for an answered message, sent while its regenerate is being admitted, stops that regenerate", async () => {
    const database = use();
    const { browser } = await register(database, "regenerate-stop@example.com");
    const chatId = await newChat(database, browser);
    fake.configure({ chunkDelayMs: 0 });
    const messageId = `u-${crypto.randomUUID()}`;
    try {
      await readChunks(
        await postTurn(database, browser, {
          chatId,
          modelId: MODEL,
          text: "A quick one.",
          id: messageId,
        }),
      );
      await eventually(async () => !(await isTurnActive(database.db, chatId)));
    } finally {
      fake.configure({ chunkDelayMs: 25 });
    }
    // The regenerate has taken the chat but not dropped the old reply yet, nor listened.
    const admitted = await acquireLease(database.db, chatId, 30_000);
    if (!admitted) throw new Error("the chat's lease was not free");
    const stop = await stopWith(database, browser, chatId, { messageId });
    expect(stop.status).toBe(202);
    await releaseLease(database.db, admitted);

    const regenerated = await readChunks(
      await postRegenerate(database, browser, { chatId, modelId: MODEL }),
    );
    const finish = regenerated.find((c) => c.type === "finish") as {
      messageMetadata?: { stopped?: boolean };
    };
    expect(finish.messageMetadata?.stopped).toBe(true);
    expect(textOf(regenerated).length).toBeLessThan(60);
  });

  it("a stop naming a regenerate's attempt, sent before that regenerate takes the chat, stops it", async () => {
    const database = use();
    const { browser } = await register(database, "regenerate-early-stop@example.com");
    const chatId = await newChat(database, browser);
    fake.configure({ chunkDelayMs: 0 });
    const messageId = `u-${crypto.randomUUID()}`;
    try {
      await readChunks(
        await postTurn(database, browser, {
          chatId,
          modelId: MODEL,
          text: "A quick one.",
          id: messageId,
        }),
      );
      await eventually(async () => !(await isTurnActive(database.db, chatId)));
    } finally {
      fake.configure({ chunkDelayMs: 25 });
    }
    // Regenerate, then Stop at once: the Stop reaches the server first, while the message still
    // has its old reply and the chat is free. It names the regenerate's own attempt.
    const attemptId = `a-${crypto.randomUUID()}`;
    const stop = await stopWith(database, browser, chatId, { messageId, attemptId });
    expect(stop.status).toBe(202);

    const regenerated = await readChunks(
      await postRegenerate(database, browser, { chatId, modelId: MODEL, attemptId }),
    );
    const finish = regenerated.find((c) => c.type === "finish") as {
      messageMetadata?: { stopped?: boolean };
    };
    expect(finish.messageMetadata?.stopped).toBe(true);
    expect(textOf(regenerated).length).toBeLessThan(60);
  });

  it("a turn whose stop channel could not be opened is still stopped, by the stop it finds left for it", async () => {
    const database = use();
    const { browser } = await register(database, "no-channel@example.com");
    const chatId = await newChat(database, browser);
    // Redis failed the turn's subscription (it did not answer in time): no publish reaches it.
    const subscriber = liveBus().subscriber;
    const subscribe = subscriber.subscribe.bind(subscriber);
    const failed = vi
      .spyOn(subscriber, "subscribe")
      .mockImplementation((channel, listener) =>
        channel.startsWith("fold:stop:")
          ? Promise.reject(new Error("the live bus's Redis did not answer in 2 s"))
          : subscribe(channel, listener),
      );
    try {
      const messageId = `u-${crypto.randomUUID()}`;
      const { seen, rest } = await readUntilText(
        await postTurn(database, browser, {
          chatId,
          modelId: MODEL,
          text: "Tell me a long story.",
          id: messageId,
        }),
        30,
      );
      expect(failed).toHaveBeenCalledWith(`fold:stop:${chatId}`, expect.any(Function));
      const stop = await stopWith(database, browser, chatId, { messageId });
      expect(stop.status).toBe(202);
      for await (const chunk of rest) seen.push(chunk);
      const finish = seen.find((c) => c.type === "finish") as {
        messageMetadata?: { stopped?: boolean };
      };
      expect(finish.messageMetadata?.stopped).toBe(true);
      // Far short of the 300-token reply (about 1,200 characters).
      expect(textOf(seen).length).toBeLessThan(600);
    } finally {
      failed.mockRestore();
    }
  });

  it("a turn's reply does not wait for its stop channel; a stop sent before the turn listens stops it once it does", async () => {
    const database = use();
    const { browser } = await register(database, "slow-channel@example.com");
    const chatId = await newChat(database, browser);
    // This instance's Redis is slow to subscribe: the turn's subscription waits for `open()`.
    const channels = holdStopChannels();
    try {
      const messageId = `u-${crypto.randomUUID()}`;
      const unanswered = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error("the reply waited for the stop channel")), 5_000),
      );
      const { seen, rest } = await Promise.race([
        postTurn(database, browser, {
          chatId,
          modelId: MODEL,
          text: "Tell me a long story.",
          id: messageId,
        }).then((response) => readUntilText(response, 30)),
        unanswered,
      ]);
      expect(channels.asked).toEqual([`fold:stop:${chatId}`]);
      const stop = await stopWith(database, browser, chatId, { messageId });
      expect(stop.status).toBe(202);
      channels.open();
      for await (const chunk of rest) seen.push(chunk);
      const finish = seen.find((c) => c.type === "finish") as {
        messageMetadata?: { stopped?: boolean };
      };
      expect(finish.messageMetadata?.stopped).toBe(true);
      // Far short of the 300-token reply (about 1,200 characters).
      expect(textOf(seen).length).toBeLessThan(600);
      await eventually(async () => !(await isTurnActive(database.db, chatId)));
    } finally {
      channels.restore();
    }
  });

  it("a Stop sent right after the message, before its turn listens, stops it before the provider is called", async () => {
    const database = use();
    const { browser } = await register(database, "stop-right-after-send@example.com");
    const chatId = await newChat(database, browser);
    const messageId = `u-${crypto.randomUUID()}`;
    const attemptId = `a-${crypto.randomUUID()}`;
    // This instance's Redis is a moment slow to subscribe: the turn is ready to call its model
    // before it listens (and so before it has looked for a stop left pending for it).
    const channels = holdStopChannels();
    try {
      // The page's Stop, landing as its message is admitted: left pending for that attempt.
      const stop = await stopWith(database, browser, chatId, { messageId, attemptId });
      expect(stop.status).toBe(202);
      const response = await postTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: "Tell me a long story.",
        id: messageId,
        attemptId,
      });
      expect(response.status).toBe(200);
      // The subscription answers a tenth of a second after the turn asked for it, unless the
      // provider was called first.
      await eventually(async () => channels.asked.length > 0);
      const askedAt = Date.now();
      await eventually(async () => fake.requests.length > 0 || Date.now() - askedAt > 100);
      channels.open();
      const chunks = await readChunks(response);
      const finish = chunks.find((c) => c.type === "finish") as {
        messageMetadata?: { stopped?: boolean };
      };
      expect(finish.messageMetadata?.stopped).toBe(true);
      expect(textOf(chunks)).toBe("");
      // The provider never saw the request.
      expect(fake.requests).toHaveLength(0);
      await eventually(async () => !(await isTurnActive(database.db, chatId)));
    } finally {
      channels.restore();
    }
  });

  it("a stop that comes as its turn ends, once nobody listens, is not left for the next Regenerate", async () => {
    const database = use();
    const { browser } = await register(database, "ending-stop@example.com");
    const chatId = await newChat(database, browser);
    const messageId = `u-${crypto.randomUUID()}`;
    // The turn's last steps wait here: it no longer listens, and still holds the chat.
    const publisher = liveBus().publisher;
    const set = publisher.set.bind(publisher);
    const { promise: ending, resolve: reached } = Promise.withResolvers<void>();
    const { promise: opened, resolve: open } = Promise.withResolvers<void>();
    const held = vi.spyOn(publisher, "set").mockImplementation(async (key, value, options) => {
      if (key === `fold:live-stream:${chatId}` && value === "") {
        reached();
        await opened;
      }
      return set(key, value, options);
    });
    fake.configure({ chunkDelayMs: 0 });
    try {
      const response = await postTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: "A quick one.",
        id: messageId,
      });
      const reading = readChunks(response);
      await ending;
      const stop = await stopWith(database, browser, chatId, { messageId });
      expect(stop.status).toBe(202);
      open();
      await reading;
      await eventually(async () => !(await isTurnActive(database.db, chatId)));

      // Slow enough that a stop found as it begins would cut it.
      fake.configure({ chunkDelayMs: 25, replyTokens: 40 });
      const retried = await readChunks(
        await postRegenerate(database, browser, { chatId, modelId: MODEL }),
      );
      const finish = retried.find((c) => c.type === "finish") as {
        messageMetadata?: { stopped?: boolean };
      };
      expect(finish.messageMetadata?.stopped).toBeUndefined();
    } finally {
      open();
      held.mockRestore();
      fake.configure({ chunkDelayMs: 25, replyTokens: 300 });
    }
  });

  it("a stop that comes after its attempt failed unanswered does not stop the Retry that follows", async () => {
    const database = use();
    const { browser } = await register(database, "stale-stop@example.com");
    const chatId = await newChat(database, browser);
    const messageId = `u-${crypto.randomUUID()}`;
    fake.script({ fault: "500" }, { fault: "500" }, { fault: "500" });
    const failed = await readChunks(
      await postTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: "Tell me a long story.",
        id: messageId,
        attemptId: "attempt-1",
      }),
    );
    expect(failed.some((c) => c.type === "error")).toBe(true);
    await eventually(async () => !(await isTurnActive(database.db, chatId)));

    // Stop, pressed as the error came: the message has no reply, so the server cannot tell it
    // from a stop sent before its turn; it waits for that attempt.
    const stop = await stopWith(database, browser, chatId, { messageId, attemptId: "attempt-1" });
    expect(stop.status).toBe(202);

    fake.configure({ chunkDelayMs: 25, replyTokens: 40 });
    try {
      const retried = await readChunks(
        await postRegenerate(database, browser, {
          chatId,
          modelId: MODEL,
          attemptId: "attempt-2",
        }),
      );
      const finish = retried.find((c) => c.type === "finish") as {
        messageMetadata?: { stopped?: boolean };
      };
      expect(finish.messageMetadata?.stopped).toBeUndefined();
      expect(retried.some((c) => c.type === "error")).toBe(false);
    } finally {
      fake.configure({ chunkDelayMs: 25, replyTokens: 300 });
    }
  });

  it("a stop from a tab that only followed the reply, coming after its turn failed unanswered, does not stop the Retry", async () => {
    const database = use();
    const { browser } = await register(database, "follower-stop@example.com");
    const chatId = await newChat(database, browser);
    const messageId = `u-${crypto.randomUUID()}`;
    fake.script({ fault: "500" }, { fault: "500" }, { fault: "500" });
    await readChunks(
      await postTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: "Tell me a long story.",
        id: messageId,
        attemptId: "attempt-1",
      }),
    );
    await eventually(async () => !(await isTurnActive(database.db, chatId)));

    // The other tab knows the message, not the attempt; no turn runs any more.
    const stop = await stopWith(database, browser, chatId, { messageId });
    expect(stop.status).toBe(200);
    expect(await stop.json()).toEqual({ stopping: false });

    fake.configure({ chunkDelayMs: 25, replyTokens: 40 });
    try {
      const retried = await readChunks(
        await postRegenerate(database, browser, { chatId, modelId: MODEL, attemptId: "attempt-2" }),
      );
      const finish = retried.find((c) => c.type === "finish") as {
        messageMetadata?: { stopped?: boolean };
      };
      expect(finish.messageMetadata?.stopped).toBeUndefined();
      expect(retried.some((c) => c.type === "error")).toBe(false);
    } finally {
      fake.configure({ chunkDelayMs: 25, replyTokens: 300 });
    }
  });

  it("a stop sent before the Retry of an unanswered message is admitted stops it, though a note came after the message", async () => {
    const database = use();
    const { browser } = await register(database, "noted-stop@example.com");
    const chatId = await newChat(database, browser);
    const messageId = `u-${crypto.randomUUID()}`;
    fake.script({ fault: "500" }, { fault: "500" }, { fault: "500" });
    await readChunks(
      await postTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: "Tell me a long story.",
        id: messageId,
        attemptId: "attempt-1",
      }),
    );
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    // A note added meanwhile: a compaction entry after the message, which is not its reply.
    const noted = await call(database, notesRoute.POST, {
      path: `/api/chats/${chatId}/memory/notes`,
      method: "POST",
      params: { id: chatId },
      body: { note: "Prefers short stories.", version: 0 },
      browser,
    });
    expect(noted.status).toBe(200);

    // Retry, then Stop, the Stop reaching the server first.
    const stop = await stopWith(database, browser, chatId, { messageId, attemptId: "attempt-2" });
    expect(stop.status).toBe(202);
    const retried = await readChunks(
      await postRegenerate(database, browser, { chatId, modelId: MODEL, attemptId: "attempt-2" }),
    );
    const finish = retried.find((c) => c.type === "finish") as {
      messageMetadata?: { stopped?: boolean };
    };
    expect(finish.messageMetadata?.stopped).toBe(true);
    expect(textOf(retried).length).toBeLessThan(60);
  });

  it("a stop naming an attempt stops that attempt's turn when it comes before the turn", async () => {
    const database = use();
    const { browser } = await register(database, "attempt-stop@example.com");
    const chatId = await newChat(database, browser);
    const messageId = `u-${crypto.randomUUID()}`;
    const stop = await stopWith(database, browser, chatId, { messageId, attemptId: "attempt-1" });
    expect(stop.status).toBe(202);
    const chunks = await readChunks(
      await postTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: "Tell me a long story.",
        id: messageId,
        attemptId: "attempt-1",
      }),
    );
    const finish = chunks.find((c) => c.type === "finish") as {
      messageMetadata?: { stopped?: boolean };
    };
    expect(finish.messageMetadata?.stopped).toBe(true);
    expect(textOf(chunks).length).toBeLessThan(60);
  });

  it("refuses a stop whose body is not what it expects", async () => {
    const database = use();
    const { browser } = await register(database, "bad-stop@example.com");
    const chatId = await newChat(database, browser);
    const response = await stopWith(database, browser, chatId, { messageId: 42 });
    expect(response.status).toBe(400);
    // An attempt is an attempt at a message; and its id is a short token.
    const orphan = await stopWith(database, browser, chatId, { attemptId: "attempt-1" });
    expect(orphan.status).toBe(400);
    const odd = await stopWith(database, browser, chatId, { messageId: "u-1", attemptId: "a b" });
    expect(odd.status).toBe(400);
  });

  it("the stop route answers whether a reply was running, and only for the chat's owner", async () => {
    const database = use();
    const { browser } = await register(database, "owner-stop@example.com");
    const { browser: stranger } = await register(database, "stranger-stop@example.com");
    const chatId = await newChat(database, browser);
    const stopCall = (who: Browser) =>
      call(database, stopRoute.POST, {
        path: `/api/chats/${chatId}/stop`,
        method: "POST",
        params: { id: chatId },
        browser: who,
      });

    const idle = await stopCall(browser);
    expect(idle.status).toBe(200);
    expect(await idle.json()).toEqual({ stopping: false });
    expect((await stopCall(stranger)).status).toBe(404);

    // The chat is held, but by nothing that listens for Stop (a Compact now, an edit, a turn
    // still preparing): nothing is stopping, and the answer says so.
    const held = await acquireLease(database.db, chatId, 30_000);
    if (!held) throw new Error("the chat's lease was not free");
    try {
      const unheard = await stopCall(browser);
      expect(unheard.status).toBe(200);
      expect(await unheard.json()).toEqual({ stopping: false });
    } finally {
      await releaseLease(database.db, held);
    }

    const response = await startTurn(database, browser, chatId);
    const { rest } = await readUntilText(response, 12);
    // A stop naming no message reaches only a turn that listens.
    await listening(chatId);
    expect((await stopCall(browser)).status).toBe(202);
    for await (const _ of rest); // to the end of the stopped reply
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    const stored = await shownChat(database, browser, chatId);
    expect(stored.messages.at(-1)?.metadata?.stopped).toBe(true);
  });
});

describe("the chat's stop channel on Redis", () => {
  it("a turn that stops listening leaves another turn of the same chat in its process listening; the channel is left with the last one", async () => {
    // This instance's own connections, where two turns of one chat listen: the old one lost
    // its lease, a new one took the chat.
    const thisInstance = redisBus(process.env.REDIS_URL ?? "");
    const chatId = `bus-${randomUUID()}`;
    const heard: string[] = [];
    const unwatchOld = await watchStop(thisInstance, chatId, { messageId: "u-1" }, () =>
      heard.push("old"),
    );
    const unwatchNew = await watchStop(thisInstance, chatId, { messageId: "u-2" }, () =>
      heard.push("new"),
    );

    await unwatchOld();
    expect(await requestStop(otherInstance, chatId)).toBe(1);
    await eventually(async () => heard.length > 0);
    expect(heard).toEqual(["new"]);

    await unwatchNew();
    // Nobody in Redis subscribes to the channel any more.
    expect(await requestStop(otherInstance, chatId)).toBe(0);
  });
});
