import { beforeAll, expect, it } from "vitest";
import * as chatApi from "@/app/api/chat/route";
import * as contextRoute from "@/app/api/chats/[id]/context/route";
import * as chatRoute from "@/app/api/chats/[id]/route";
import * as chatsRoute from "@/app/api/chats/route";
import { MESSAGE_MAX_CHARS } from "@/lib/message/limits";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { type Browser, call, ORIGIN } from "../../helpers/http";
import { contentFingerprint } from "../../helpers/security";

const NUL = String.fromCharCode(0);
const LONE_SURROGATE = "\ud800";

describeEachDriver("text at the edge: NUL and broken Unicode get a clear 400", (use) => {
  let browser: Browser;
  let chatId: string;

  beforeAll(async () => {
    const database = use();
    browser = (await register(database, "text-edge@example.com")).browser;
    const created = await call(database, chatsRoute.POST, {
      path: "/api/chats",
      method: "POST",
      body: { title: "kept" },
      browser,
    });
    chatId = ((await created.json()) as { chat: { id: string } }).chat.id;
  });

  const message = (text: string) => ({
    trigger: "submit-message",
    chatId,
    message: { id: `m-${crypto.randomUUID()}`, role: "user", parts: [{ type: "text", text }] },
  });

  const cases: Array<{ name: string; reason: RegExp; send: () => Promise<Response> }> = [
    {
      name: "a NUL byte in a message",
      reason: /message\.parts\.0\.text: the message contains a NUL character/,
      send: () =>
        call(use(), chatApi.POST, {
          path: "/api/chat",
          method: "POST",
          body: message(`before${NUL}after`),
          browser,
        }),
    },
    {
      name: "a lone surrogate in a message",
      reason: /message\.parts\.0\.text: the message contains a lone surrogate/,
      send: () =>
        call(use(), chatApi.POST, {
          path: "/api/chat",
          method: "POST",
          body: message(`broken ${LONE_SURROGATE} text`),
          browser,
        }),
    },
    {
      name: "a NUL byte in a new chat's title",
      reason: /^title contains a NUL character/,
      send: () =>
        call(use(), chatsRoute.POST, {
          path: "/api/chats",
          method: "POST",
          body: { title: `a${NUL}b` },
          browser,
        }),
    },
    {
      name: "a lone surrogate in a rename",
      reason: /^title contains a lone surrogate/,
      send: () =>
        call(use(), chatRoute.PATCH, {
          path: `/api/chats/${chatId}`,
          method: "PATCH",
          body: { title: `x${LONE_SURROGATE}` },
          params: { id: chatId },
          browser,
        }),
    },
    {
      name: "a NUL byte in a query parameter (?modelId=truth:%00)",
      reason: /^modelId contains a NUL character/,
      send: () =>
        call(use(), contextRoute.GET, {
          path: `/api/chats/${chatId}/context?modelId=truth:%00`,
          params: { id: chatId },
          browser,
        }),
    },
    {
      name: "a NUL byte in a path parameter",
      reason: /id: the text contains a NUL character/,
      send: () =>
        call(use(), chatRoute.PATCH, {
          path: "/api/chats/x%00",
          method: "PATCH",
          body: { title: "fine" },
          params: { id: `x${NUL}` },
          browser,
        }),
    },
    {
      name: "bytes that are not UTF-8",
      reason: /not valid UTF-8/,
      send: async () => {
        const request = new Request(`${ORIGIN}/api/chats`, {
          method: "POST",
          headers: { origin: ORIGIN, cookie: browser.cookie, "content-type": "application/json" },
          body: new Uint8Array([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
        });
        const { withDatabase } = await import("@/lib/db/client");
        return withDatabase(use(), () => chatsRoute.POST(request, { params: Promise.resolve({}) }));
      },
    },
  ];

  it.each(cases.map((c) => [c.name, c] as const))("refuses %s and writes nothing", async (_, c) => {
    const database = use();
    const before = await contentFingerprint(database);
    const response = await c.send();
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toMatch(/^bad_request:/);
    expect(body.error.message).toMatch(c.reason);
    expect(await contentFingerprint(database)).toBe(before);
  });

  it("reads a message at the length cap whose every character JSON sends as six bytes (\\u0001): only the model's window refuses it", async () => {
    const database = use();
    const text = "\u0001".repeat(MESSAGE_MAX_CHARS - 2).concat("ok");
    const body = message(text);
    // As a browser sends it: each control character escaped.
    expect(JSON.stringify(body).length).toBeGreaterThan(6 * (MESSAGE_MAX_CHARS - 2));
    const response = await call(database, chatApi.POST, {
      path: "/api/chat",
      method: "POST",
      body,
      browser,
    });
    const answer = await response.text();
    // Past the body limit and the schema: what answers is the window of the chat's model (the
    // offline demo's 8,192 tokens cannot hold 100,000 characters), not a body over its limit.
    expect(response.status, answer.slice(0, 300)).toBe(400);
    const { error } = JSON.parse(answer) as { error: { code: string; message: string } };
    expect(error.code).toBe("bad_request:too_long");
    expect(error.message).toMatch(
      /too long on its own: demo:demo's context window is 8,192 tokens/,
    );
  });

  it("still stores the same characters when they are well-formed (emoji, RTL, zero-width)", async () => {
    const database = use();
    const title = "🙂 \u202eRTL\u200b";
    const response = await call(database, chatRoute.PATCH, {
      path: `/api/chats/${chatId}`,
      method: "PATCH",
      body: { title },
      params: { id: chatId },
      browser,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ chat: { title } });
  });
});

describeEachDriver("request bodies: the size limit holds while the body streams", (use) => {
  it("answers 413 after reading just past the limit of a body sent without Content-Length", async () => {
    const database = use();
    const { browser } = await register(database, "streamer@example.com");
    const chunk = new TextEncoder().encode(`"${"x".repeat(64 * 1024)}`);
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const request = new Request(`${ORIGIN}/api/chats`, {
      method: "POST",
      headers: { origin: ORIGIN, cookie: browser.cookie, "content-type": "application/json" },
      body: endless,
      duplex: "half",
    } as RequestInit);
    expect(request.headers.get("content-length")).toBeNull();

    const { withDatabase } = await import("@/lib/db/client");
    const before = await contentFingerprint(database);
    const response = await withDatabase(database, () =>
      chatsRoute.POST(request, { params: Promise.resolve({}) }),
    );

    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: "payload_too_large:body" } });
    // 1 MB limit: reading stopped within a few chunks of it, not at the end of an endless body.
    expect(pulled).toBeLessThan(1_000_000 + 4 * chunk.byteLength);
    expect(await contentFingerprint(database)).toBe(before);
  });
});
