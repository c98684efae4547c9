import { beforeAll, expect, it } from "vitest";
import * as chatsRoute from "@/app/api/chats/route";
import { apiRoutes } from "../../helpers/api-routes";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { type Browser, call } from "../../helpers/http";
import {
  attackEndpoint,
  CSRF_ATTACKS,
  contentFingerprint,
  type Endpoint,
  foldEndpoints,
} from "../../helpers/security";

// Read from app/api at collection time: a new route gets its own test without being listed.
const endpoints = foldEndpoints(await apiRoutes());

/** A body the endpoint would accept from Fold's own page, so only the origin can refuse it. */
function plausibleBody(endpoint: Endpoint, chatId: string): unknown {
  const key = `${endpoint.method} ${endpoint.route.pattern}`;
  if (key === "POST /api/chat") {
    return {
      trigger: "submit-message",
      chatId,
      message: { id: "csrf-1", role: "user", parts: [{ type: "text", text: "hi" }] },
    };
  }
  if (key === "POST /api/chats") return { title: "forged" };
  if (key === "PATCH /api/chats/[id]") return { title: "forged" };
  if (key === "PUT /api/admin/models") {
    return { provider: "demo", model: "demo", contextWindow: 1000, maxOutputTokens: null };
  }
  return endpoint.method === "DELETE" ? undefined : {};
}

describeEachDriver("CSRF: every state-changing route refuses a foreign origin", (use) => {
  let admin: Browser;
  let chatId: string;

  beforeAll(async () => {
    const database = use();
    admin = (await register(database, "csrf-admin@example.com")).browser;
    const created = await call(database, chatsRoute.POST, {
      path: "/api/chats",
      method: "POST",
      body: {},
      browser: admin,
    });
    chatId = ((await created.json()) as { chat: { id: string } }).chat.id;
  });

  it("finds Fold's state-changing routes by reading app/api", () => {
    const found = endpoints.map((e) => `${e.method} ${e.route.pattern}`);
    expect(found).toEqual(
      expect.arrayContaining([
        "POST /api/chat",
        "POST /api/chats",
        "PATCH /api/chats/[id]",
        "DELETE /api/chats/[id]",
        "POST /api/chats/[id]/compact",
        "PUT /api/admin/models",
      ]),
    );
  });

  it.each(endpoints.map((e) => [`${e.method} ${e.route.pattern}`, e] as const))(
    "%s answers 403 to every forged request and writes nothing",
    async (_, endpoint) => {
      const database = use();
      const outcomes = await attackEndpoint(database, endpoint, {
        browser: admin,
        values: { id: chatId },
        body: plausibleBody(endpoint, chatId),
      });
      expect(outcomes).toHaveLength(CSRF_ATTACKS.length);
      for (const outcome of outcomes) {
        expect(outcome, outcome.attack).toMatchObject({
          status: 403,
          code: "forbidden:origin",
          wrote: false,
        });
      }
    },
  );

  it("refuses a same-origin request that does not send JSON with 415, writing nothing", async () => {
    const database = use();
    const before = await contentFingerprint(database);
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data",
      "",
    ]) {
      const response = await call(database, chatsRoute.POST, {
        path: "/api/chats",
        method: "POST",
        rawBody: JSON.stringify({ title: "form post" }),
        browser: admin,
        headers: { "content-type": type },
      });
      expect(response.status, type).toBe(415);
      expect(await response.json()).toMatchObject({
        error: { code: "unsupported_media_type:body" },
      });
    }
    expect(await contentFingerprint(database)).toBe(before);
  });

  it("accepts the same request from Fold's own origin, with a charset on the JSON type", async () => {
    const database = use();
    const response = await call(database, chatsRoute.POST, {
      path: "/api/chats",
      method: "POST",
      body: { title: "from Fold" },
      browser: admin,
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(response.status).toBe(201);
  });
});
