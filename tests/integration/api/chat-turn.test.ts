import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible HTTP server, configured as Fold's provider before Fold loads.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({ models: [{ id: "fake-model", maxModelLen: 8192 }] });
});

import * as chatApi from "@/app/api/chat/route";
import * as chatRoute from "@/app/api/chats/[id]/route";
import type { Database } from "@/lib/db/client";
import { acquireLease } from "@/lib/db/queries/leases";
import { loadHistory } from "@/lib/db/queries/messages";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";
import { newChat, postRegenerate, postTurn, shownChat } from "../../helpers/turns";
import { eventually, readChunks } from "../../helpers/ui-stream";

const MODEL = "fake:fake-model";

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.configure({ chunkDelayMs: 0 });
});

type StoredMessage = {
  id: string;
  role: string;
  parts: Array<{ type: string; text?: string }>;
  metadata: { stats?: Record<string, unknown> } | null;
};

const send = (database: Database, browser: Browser, chatId: string, text: string, id?: string) =>
  postTurn(database, browser, { chatId, modelId: MODEL, text, id });

async function settled(database: Database, browser: Browser, chatId: string) {
  await eventually(async () => !(await isTurnActive(database.db, chatId)));
  return (await shownChat(database, browser, chatId)).messages as StoredMessage[];
}

const textOf = (m: StoredMessage | undefined) =>
  m?.parts
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("") ?? "";

describeEachDriver("a chat turn through the real provider path", (use) => {
  let alice: Browser;
  let bob: Browser;

  it("streams the reply and persists both messages in order with stats", async () => {
    const database = use();
    alice = (await register(database, "alice@example.com")).browser;
    bob = (await register(database, "bob@example.com")).browser;
    const chatId = await newChat(database, alice);

    const response = await send(database, alice, chatId, "What is a context window?");
    expect(response.status).toBe(200);
    // Nothing may compress or buffer the event stream (lib/http/event-stream.ts).
    expect(response.headers.get("cache-control")).toContain("no-transform");
    const chunks = await readChunks(response);
    const streamedText = chunks
      .filter((c) => c.type === "text-delta")
      .map((c) => c.delta)
      .join("");
    expect(streamedText).toContain("What is a context window?");
    const finish = chunks.find((c) => c.type === "finish") as {
      messageMetadata?: { stats?: Record<string, unknown> };
    };
    expect(finish?.messageMetadata?.stats).toBeDefined();

    const messages = await settled(database, alice, chatId);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(textOf(messages[1])).toBe(streamedText);
    const rows = await loadHistory(database.db, chatId);
    expect(rows.map((r) => r.seq)).toEqual([0, 1]);

    const stats = messages[1]?.metadata?.stats as Record<string, number | string | null>;
    // Persisted exactly as streamed on the finish chunk.
    expect(stats).toEqual(finish.messageMetadata?.stats);
    expect(stats.model).toBe(MODEL);
    expect(stats.inputTokens).toBe(fake.requests[0]?.promptTokens);
    expect(stats.contextTokens).toBe(fake.requests[0]?.promptTokens);
    expect(stats.outputTokens).toBeGreaterThan(0);
    expect(stats.steps).toBe(1);
    // The window the turn was budgeted against, for the stats popover's "x / window (n %)".
    expect(stats.contextWindow).toBe(8192);
    expect(stats.finishReason).toBe("stop");
    expect(typeof stats.firstTokenAt).toBe("number");
    expect(Number(stats.firstTokenAt)).toBeGreaterThanOrEqual(Number(stats.startedAt));
    expect(Number(stats.finishedAt)).toBeGreaterThanOrEqual(Number(stats.firstTokenAt));

    // The chat got a title from its first message and remembers its model.
    const chat = await call(database, chatRoute.GET, {
      path: `/api/chats/${chatId}`,
      params: { id: chatId },
      browser: alice,
    });
    expect(await chat.json()).toMatchObject({
      chat: { title: "What is a context window?", modelId: MODEL },
    });
  });

  it("keeps a title the user gave, even the one a new chat starts with", async () => {
    const database = use();
    const { browser: fay } = await register(database, "fay@example.com");
    const rename = (chatId: string, title: string) =>
      call(database, chatRoute.PATCH, {
        path: `/api/chats/${chatId}`,
        method: "PATCH",
        body: { title },
        params: { id: chatId },
        browser: fay,
      });
    const titleOf = async (chatId: string) =>
      (
        (await (
          await call(database, chatRoute.GET, {
            path: `/api/chats/${chatId}`,
            params: { id: chatId },
            browser: fay,
          })
        ).json()) as { chat: { title: string } }
      ).chat.title;
    // Renamed "New chat" before its first message: the first turn does not name it.
    const renamedFirst = await newChat(database, fay);
    expect((await rename(renamedFirst, "New chat")).status).toBe(200);
    await readChunks(await send(database, fay, renamedFirst, "Plan the harbour festival"));
    await settled(database, fay, renamedFirst);
    expect(await titleOf(renamedFirst)).toBe("New chat");
    // Named by its first turn, then renamed "New chat": the next turn leaves that title alone.
    const renamedAfter = await newChat(database, fay);
    await readChunks(await send(database, fay, renamedAfter, "Plan the lantern parade"));
    await settled(database, fay, renamedAfter);
    expect(await titleOf(renamedAfter)).toBe("Plan the lantern parade");
    expect((await rename(renamedAfter, "New chat")).status).toBe(200);
    await readChunks(await send(database, fay, renamedAfter, "And the route?"));
    await settled(database, fay, renamedAfter);
    expect(await titleOf(renamedAfter)).toBe("New chat");
  });

  it("sends the stored history to the provider, not what the browser claims", async () => {
    const database = use();
    const chatId = await newChat(database, alice);
    await readChunks(await send(database, alice, chatId, "first question"));
    await settled(database, alice, chatId);
    await readChunks(await send(database, alice, chatId, "second question"));
    await settled(database, alice, chatId);
    const sent = fake.requests[1]?.messages.map((m) => m.role);
    expect(sent).toEqual(["system", "user", "assistant", "user"]);
    // The second request shares the first one's prefix: the fake server's cache saw it.
    expect(fake.requests[1]?.cachedTokens).toBeGreaterThan(0);
  });

  it("persists the complete reply even when the browser disconnects mid-stream", async () => {
    const database = use();
    const chatId = await newChat(database, alice);
    fake.configure({ chunkDelayMs: 20, replyTokens: 60 });
    const response = await send(database, alice, chatId, "tell me a long story");
    const reader = response.body?.getReader();
    await reader?.read();
    await reader?.cancel();

    const messages = await settled(database, alice, chatId);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(messages[1]?.metadata?.stats?.outputTokens).toBe(60);
  });

  it("regenerate replaces the last reply; editing a message drops what followed it", async () => {
    const database = use();
    const chatId = await newChat(database, alice);
    await readChunks(await send(database, alice, chatId, "one", "u-one"));
    await settled(database, alice, chatId);
    await readChunks(await send(database, alice, chatId, "two", "u-two"));
    const before = await settled(database, alice, chatId);
    const lastReply = before[3];

    fake.script({ text: "A different answer." });
    const regen = await postRegenerate(database, alice, {
      chatId,
      modelId: MODEL,
      messageId: lastReply?.id,
    });
    expect(regen.status).toBe(200);
    await readChunks(regen);
    const afterRegen = await settled(database, alice, chatId);
    expect(afterRegen.map((m) => m.id).slice(0, 3)).toEqual(before.map((m) => m.id).slice(0, 3));
    expect(afterRegen).toHaveLength(4);
    expect(afterRegen[3]?.id).not.toBe(lastReply?.id);
    expect(textOf(afterRegen[3])).toBe("A different answer.");

    await readChunks(await send(database, alice, chatId, "one, edited", "u-one"));
    const afterEdit = await settled(database, alice, chatId);
    expect(afterEdit.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(afterEdit[0]?.id).toBe("u-one");
    expect(textOf(afterEdit[0])).toBe("one, edited");
    expect((await loadHistory(database.db, chatId)).map((r) => r.seq)).toEqual([0, 1]);
  });

  it("a provider 500 leaves a clean state: a readable error, the user message kept, no half answer", async () => {
    const database = use();
    const chatId = await newChat(database, alice);
    fake.script({ fault: "500" }, { fault: "500" }, { fault: "500" });
    const chunks = await readChunks(await send(database, alice, chatId, "will this fail?"));
    const error = chunks.find((c) => c.type === "error") as { errorText?: string } | undefined;
    expect(error?.errorText).toMatch(/model provider had an internal error \(500\)/);
    const messages = await settled(database, alice, chatId);
    expect(messages.map((m) => m.role)).toEqual(["user"]);
    expect(await isTurnActive(database.db, chatId)).toBe(false);

    // Retry works from that state.
    const retry = await postRegenerate(database, alice, { chatId, modelId: MODEL });
    await readChunks(retry);
    expect((await settled(database, alice, chatId)).map((m) => m.role)).toEqual([
      "user",
      "assistant",
    ]);
  });

  it("Retry on a reply that was never stored answers the message it was for", async () => {
    const database = use();
    const chatId = await newChat(database, alice);
    fake.script({ fault: "500" }, { fault: "500" }, { fault: "500" });
    const failed = await readChunks(await send(database, alice, chatId, "will this fail?"));
    // The browser holds the failed reply under the id its stream started with; nothing stored it.
    const unstoredId = failed.find((c) => c.type === "start")?.messageId as string;
    expect((await settled(database, alice, chatId)).map((m) => m.role)).toEqual(["user"]);

    const retry = (messageId: string) =>
      postRegenerate(database, alice, { chatId, modelId: MODEL, messageId });
    fake.script({ text: "Answered at last." });
    const answered = await retry(unstoredId);
    expect(answered.status).toBe(200);
    await readChunks(answered);
    const messages = await settled(database, alice, chatId);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(textOf(messages[1])).toBe("Answered at last.");

    // Once the message has its reply, a reply the chat never held is nothing to regenerate.
    const stale = await retry(unstoredId);
    expect(stale.status).toBe(404);
    expect((await settled(database, alice, chatId)).map((m) => m.id)).toEqual(
      messages.map((m) => m.id),
    );
  });

  it("a Retry from a page that still shows its message unanswered is refused once the chat went on elsewhere", async () => {
    const database = use();
    const chatId = await newChat(database, alice);
    fake.script({ fault: "500" }, { fault: "500" }, { fault: "500" });
    await readChunks(await send(database, alice, chatId, "will this fail?"));
    const [asked] = await settled(database, alice, chatId);
    // Another tab sends a message of its own, and it is answered.
    await readChunks(await send(database, alice, chatId, "Never mind that: what time is it?"));
    const wentOn = await settled(database, alice, chatId);
    expect(wentOn.map((m) => m.role)).toEqual(["user", "user", "assistant"]);

    // The first tab's Retry names the message it shows unanswered: not the other tab's reply.
    const retry = await postRegenerate(database, alice, {
      chatId,
      modelId: MODEL,
      messageId: asked?.id as string,
    });
    expect(retry.status).toBe(409);
    expect(await retry.json()).toMatchObject({
      error: { code: "conflict:message", message: expect.stringMatching(/another tab/) },
    });
    expect((await settled(database, alice, chatId)).map((m) => m.id)).toEqual(
      wentOn.map((m) => m.id),
    );
    expect(await isTurnActive(database.db, chatId)).toBe(false);
  });

  it("a stream cut mid-reply is not stored as an answer", async () => {
    const database = use();
    const chatId = await newChat(database, alice);
    fake.script({
      fault: "cut",
      afterChars: 10,
      text: "This reply will be cut off somewhere in the middle.",
    });
    const chunks = await readChunks(await send(database, alice, chatId, "cut me"));
    expect(chunks.some((c) => c.type === "error")).toBe(true);
    expect((await settled(database, alice, chatId)).map((m) => m.role)).toEqual(["user"]);
  });

  it("runs the tool loop and stores the call, its result and its duration", async () => {
    const database = use();
    const chatId = await newChat(database, alice);
    fake.script(
      { toolCalls: [{ name: "current_time", arguments: { timeZone: "UTC" } }] },
      { text: "It is now." },
    );
    await readChunks(await send(database, alice, chatId, "what time is it?"));
    const messages = await settled(database, alice, chatId);
    const reply = messages[1] as unknown as {
      parts: Array<{
        type: string;
        state?: string;
        toolCallId?: string;
        output?: { timeZone?: string };
      }>;
      metadata: { stats: { steps: number }; toolDurationsMs: Record<string, number> };
    };
    const toolPart = reply.parts.find((p) => p.type === "tool-current_time");
    expect(toolPart?.state).toBe("output-available");
    expect(toolPart?.output?.timeZone).toBe("UTC");
    expect(reply.metadata.stats.steps).toBe(2);
    expect(reply.metadata.toolDurationsMs[toolPart?.toolCallId ?? ""]).toBeGreaterThanOrEqual(0);
    expect(textOf(messages[1])).toBe("It is now.");
  });

  it("a tool call that fails shows and stores the tool's own error, the one the model read", async () => {
    const database = use();
    const chatId = await newChat(database, alice);
    fake.script(
      // An address fetch_url refuses before any request (no network needed).
      { toolCalls: [{ name: "fetch_url", arguments: { url: "http://127.0.0.1:9/notes" } }] },
      { text: "That address is not one I may read." },
    );
    const chunks = await readChunks(await send(database, alice, chatId, "read my notes"));
    const shown = chunks.find((c) => c.type === "tool-output-error") as
      | { errorText: string }
      | undefined;
    const messages = await settled(database, alice, chatId);
    const toolPart = (
      messages[1] as unknown as {
        parts: Array<{ type: string; state?: string; errorText?: string }>;
      }
    ).parts.find((p) => p.type === "tool-fetch_url");
    expect(toolPart?.state).toBe("output-error");
    expect(toolPart?.errorText).toMatch(/127\.0\.0\.1/);
    expect(toolPart?.errorText).not.toMatch(/provider/i);
    expect(shown?.errorText).toBe(toolPart?.errorText);
    // The model was told the same, in the request after the call.
    const followUp = JSON.stringify(fake.requests.at(-1)?.body.messages);
    expect(followUp).toContain(JSON.stringify(toolPart?.errorText).slice(1, -1));
  });

  it("refuses a second turn while one is streaming (409, after a short wait)", async () => {
    const database = use();
    const chatId = await newChat(database, alice);
    expect(await acquireLease(database.db, chatId, 60_000)).not.toBeNull();
    const response = await send(database, alice, chatId, "hello?");
    expect(response.status).toBe(409);
    expect(await loadHistory(database.db, chatId)).toEqual([]);
  });

  it("answers 409 to a message whose id another chat already holds, and writes nothing", async () => {
    const database = use();
    const first = await newChat(database, alice);
    const second = await newChat(database, alice);
    expect((await send(database, alice, first, "hello", "u-shared-id")).status).toBe(200);
    await settled(database, alice, first);
    const clash = await send(database, alice, second, "hello again", "u-shared-id");
    expect(clash.status).toBe(409);
    expect(await loadHistory(database.db, second)).toEqual([]);
    // The first chat keeps its message as it was.
    const kept = await loadHistory(database.db, first);
    expect(kept.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("rejects bad input with a clear 4xx and writes nothing", async () => {
    const database = use();
    const chatId = await newChat(database, alice);
    const body = (message: unknown, extra: Record<string, unknown> = {}) => ({
      trigger: "submit-message",
      chatId,
      modelId: MODEL,
      message,
      ...extra,
    });
    const ok = { id: "u-ok", role: "user", parts: [{ type: "text", text: "hi" }] };
    const cases: Array<[string, number, RegExp, () => Promise<Response>]> = [
      [
        "empty message",
        400,
        /empty/,
        () =>
          call(database, chatApi.POST, {
            path: "/api/chat",
            method: "POST",
            body: body({ ...ok, parts: [{ type: "text", text: "   " }] }),
            browser: alice,
          }),
      ],
      [
        "oversized message",
        400,
        /longer than/,
        () =>
          call(database, chatApi.POST, {
            path: "/api/chat",
            method: "POST",
            body: body({ ...ok, parts: [{ type: "text", text: "x".repeat(100_001) }] }),
            browser: alice,
          }),
      ],
      [
        "assistant role",
        400,
        /only user messages/,
        () =>
          call(database, chatApi.POST, {
            path: "/api/chat",
            method: "POST",
            body: body({ ...ok, role: "assistant" }),
            browser: alice,
          }),
      ],
      [
        "unknown model",
        400,
        /model/i,
        () =>
          call(database, chatApi.POST, {
            path: "/api/chat",
            method: "POST",
            body: body(ok, { modelId: "nope:model" }),
            browser: alice,
          }),
      ],
      [
        "malformed JSON",
        400,
        /not valid JSON/,
        () =>
          call(database, chatApi.POST, {
            path: "/api/chat",
            method: "POST",
            rawBody: "{",
            browser: alice,
          }),
      ],
      [
        "unknown trigger",
        400,
        /trigger/i,
        () =>
          call(database, chatApi.POST, {
            path: "/api/chat",
            method: "POST",
            body: { ...body(ok), trigger: "delete-everything" },
            browser: alice,
          }),
      ],
      [
        "unknown chat",
        404,
        /Chat not found/,
        () =>
          call(database, chatApi.POST, {
            path: "/api/chat",
            method: "POST",
            body: body(ok, { chatId: "0b9f0b4e-5d0c-4d3e-9f57-000000000000" }),
            browser: alice,
          }),
      ],
      [
        "another user's chat",
        404,
        /Chat not found/,
        () =>
          call(database, chatApi.POST, {
            path: "/api/chat",
            method: "POST",
            body: body(ok),
            browser: bob,
          }),
      ],
    ];
    for (const [name, status, message, sendIt] of cases) {
      const response = await sendIt();
      expect(response.status, name).toBe(status);
      const json = (await response.json()) as { error: { message: string } };
      expect(json.error.message, name).toMatch(message);
    }
    expect(await loadHistory(database.db, chatId)).toEqual([]);
    expect(await isTurnActive(database.db, chatId)).toBe(false);
    expect(fake.requests).toHaveLength(0);
  });
});
