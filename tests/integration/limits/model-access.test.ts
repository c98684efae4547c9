import { afterAll, beforeEach, expect, it, vi } from "vitest";

// One provider with three models; the allow-list decides which of them users may use.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(
    {
      models: [
        { id: "fake-model", maxModelLen: 8192 },
        { id: "cheap", maxModelLen: 8192 },
        { id: "pricey", maxModelLen: 8192 },
      ],
    },
    {
      DEMO_MODEL: "always",
      // A second provider that never answers (nothing listens on port 9): its list is unknown.
      OPENAI_COMPATIBLE_2_BASE_URL: "http://127.0.0.1:9/v1",
      OPENAI_COMPATIBLE_2_NAME: "gone",
    },
  );
});

import * as accessRoute from "@/app/api/admin/models/access/route";
import * as chatApi from "@/app/api/chat/route";
import * as contextRoute from "@/app/api/chats/[id]/context/route";
import * as chatRoute from "@/app/api/chats/[id]/route";
import * as chatsRoute from "@/app/api/chats/route";
import * as modelsRoute from "@/app/api/models/route";
import type { ModelInfo } from "@/lib/ai/providers";
import type { Database } from "@/lib/db/client";
import { getChat } from "@/lib/db/queries/chats";
import { loadHistory } from "@/lib/db/queries/messages";
import { usageOn } from "@/lib/db/queries/usage";
import { usageDayOf } from "@/lib/limits/quota-day";
import { register, sessionOf, signIn } from "../../helpers/auth";
import { compactNowCall } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive, whileCommitsSlowed } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";
import { newChat } from "../../helpers/turns";
import { eventually, readChunks } from "../../helpers/ui-stream";

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.configure({ chunkDelayMs: 0 });
});

type ErrorBody = { error: { code: string; message: string } };

function send(database: Database, browser: Browser, chatId: string, modelId: string) {
  return call(database, chatApi.POST, {
    path: "/api/chat",
    method: "POST",
    body: {
      trigger: "submit-message",
      chatId,
      modelId,
      message: {
        id: `u-${crypto.randomUUID()}`,
        role: "user",
        parts: [{ type: "text", text: "hi" }],
      },
    },
    browser,
  });
}

function putAccess(database: Database, admin: Browser, body: unknown) {
  return call(database, accessRoute.PUT, {
    path: "/api/admin/models/access",
    method: "PUT",
    body,
    browser: admin,
  });
}

async function pickable(database: Database, browser: Browser) {
  const response = await call(database, modelsRoute.GET, { path: "/api/models", browser });
  return (await response.json()) as { models: ModelInfo[]; defaultModelId: string | null };
}

/**
 * Every way a model id reaches the server, each expected to answer 400 (or `refusal`) and
 * save nothing.
 */
async function expectRefusedEverywhere(
  database: Database,
  browser: Browser,
  modelId: string,
  refusal = { status: 400, code: "bad_request:model" },
) {
  const chatId = await newChat(database, browser);
  const before = await getChat(database.db, chatId);
  const answers = [
    await send(database, browser, chatId, modelId),
    await call(database, chatsRoute.POST, {
      path: "/api/chats",
      method: "POST",
      body: { title: "refused", modelId },
      browser,
    }),
    await call(database, chatRoute.PATCH, {
      path: `/api/chats/${chatId}`,
      method: "PATCH",
      body: { modelId },
      params: { id: chatId },
      browser,
    }),
    // The ring for a model: no window lookup (the provider's own endpoints) for an unknown id.
    await call(database, contextRoute.GET, {
      path: `/api/chats/${chatId}/context?modelId=${encodeURIComponent(modelId)}`,
      params: { id: chatId },
      browser,
    }),
    await compactNowCall(database, browser, chatId, { modelId }),
  ];
  for (const answer of answers) {
    expect(answer.status).toBe(refusal.status);
    expect(((await answer.json()) as ErrorBody).error.code).toBe(refusal.code);
    if (refusal.status === 503) expect(answer.headers.get("retry-after")).toBe("10");
  }
  expect(await loadHistory(database.db, chatId)).toEqual([]);
  expect((await getChat(database.db, chatId))?.modelId).toBe(before?.modelId);
  const titles = (
    (await (await call(database, chatsRoute.GET, { path: "/api/chats", browser })).json()) as {
      chats: Array<{ title: string }>;
    }
  ).chats.map((c) => c.title);
  expect(titles).not.toContain("refused");
  expect(fake.requests).toHaveLength(0);
}

describeEachDriver("model allow-list", (use, driver) => {
  it("refuses a model id no provider offers with 400 and saves nothing", async () => {
    const database = use();
    await register(database, "ada@example.com");
    const bob = await register(database, "bob@example.com");
    for (const unknown of ["fake:does-not-exist", "truth:fake-model", "openai:gpt-4o"]) {
      await expectRefusedEverywhere(database, bob.browser, unknown);
    }
    const bobId = (await sessionOf(database, bob.browser))?.user.id ?? "";
    expect(await usageOn(database.db, bobId, usageDayOf(new Date()))).toEqual({
      messages: 0,
      tokens: 0,
    });
  });

  it("answers 503, not 400, for a model whose provider is not answering for its list, and saves nothing", async () => {
    const database = use();
    await register(database, "ada@example.com");
    const cleo = await register(database, "cleo@example.com");
    await expectRefusedEverywhere(database, cleo.browser, "gone:any-model", {
      status: 503,
      code: "unavailable:model",
    });
  });

  it("offers every listed model while the provider is not restricted", async () => {
    const database = use();
    const bob = await signIn(database, "bob@example.com");
    const { models, defaultModelId } = await pickable(database, bob.browser);
    expect(models.map((m) => m.id)).toEqual([
      "fake:fake-model",
      "fake:cheap",
      "fake:pricey",
      "demo:demo",
    ]);
    expect(defaultModelId).toBe("fake:fake-model");
  });

  it("a model pick that reaches the server after a later one (it hung on the way) is refused, and the chat keeps the later pick", async () => {
    const database = use();
    const bob = await register(database, "picker@example.com");
    const chatId = await newChat(database, bob.browser);
    const pick = (modelId: string, pickedAt?: number) =>
      call(database, chatRoute.PATCH, {
        path: `/api/chats/${chatId}`,
        method: "PATCH",
        body: pickedAt === undefined ? { modelId } : { modelId, pickedAt },
        params: { id: chatId },
        browser: bob.browser,
      });
    const modelOf = async () => (await getChat(database.db, chatId))?.modelId;
    const now = Date.now();
    // Picked "cheap", then "pricey"; the "pricey" save lands first, "cheap" after it.
    expect((await pick("fake:pricey", now)).status).toBe(200);
    const late = await pick("fake:cheap", now - 1_000);
    expect(late.status).toBe(409);
    const { error } = (await late.json()) as ErrorBody;
    expect(error.code).toBe("conflict:model_pick");
    expect(error.message).toMatch(/later pick .* was saved before this one/);
    expect(await modelOf()).toBe("fake:pricey");
    // A later pick still goes through; a rename never waits on picks.
    expect((await pick("fake:cheap", now + 1)).status).toBe(200);
    expect(await modelOf()).toBe("fake:cheap");
    const renamed = await call(database, chatRoute.PATCH, {
      path: `/api/chats/${chatId}`,
      method: "PATCH",
      body: { title: "Renamed" },
      params: { id: chatId },
      browser: bob.browser,
    });
    expect(renamed.status).toBe(200);
    // A clock far ahead counts as the server's now: it does not hold off every later pick.
    expect((await pick("fake:pricey", now + 3_600_000)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await pick("fake:cheap", Date.now())).status).toBe(200);
    expect(await modelOf()).toBe("fake:cheap");
    // pickedAt goes with a model, as a whole number of milliseconds before the year 10000.
    for (const body of [
      { title: "x", pickedAt: now },
      { modelId: "fake:cheap", pickedAt: -1 },
      { modelId: "fake:cheap", pickedAt: 1.5 },
      { modelId: "fake:cheap", pickedAt: "now" },
      { modelId: "fake:cheap", pickedAt: 253_402_300_800_000 },
    ]) {
      const refused = await call(database, chatRoute.PATCH, {
        path: `/api/chats/${chatId}`,
        method: "PATCH",
        body,
        params: { id: chatId },
        browser: bob.browser,
      });
      expect(refused.status, JSON.stringify(body)).toBe(400);
    }
    expect(await modelOf()).toBe("fake:cheap");
    // Without pickedAt (an older browser), a pick is saved as it comes.
    expect((await pick("fake:pricey")).status).toBe(200);
    expect(await modelOf()).toBe("fake:pricey");
  });

  it("a turn counts as a pick: a pick made before it that reaches the server after it does not take the chat back", async () => {
    const database = use();
    const bob = await register(database, "turn-picker@example.com");
    const chatId = await newChat(database, bob.browser);
    const pick = (modelId: string, pickedAt: number) =>
      call(database, chatRoute.PATCH, {
        path: `/api/chats/${chatId}`,
        method: "PATCH",
        body: { modelId, pickedAt },
        params: { id: chatId },
        browser: bob.browser,
      });
    const earlier = Date.now();
    expect((await pick("fake:cheap", earlier - 5_000)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Another tab sends with "pricey"; then a pick of "cheap" made before that turn lands.
    await readChunks(await send(database, bob.browser, chatId, "fake:pricey"));
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    expect((await getChat(database.db, chatId))?.modelId).toBe("fake:pricey");
    const late = await pick("fake:cheap", earlier);
    expect(late.status).toBe(409);
    expect((await getChat(database.db, chatId))?.modelId).toBe("fake:pricey");
    // A pick made after the turn goes through.
    expect((await pick("fake:cheap", Date.now())).status).toBe(200);
    expect((await getChat(database.db, chatId))?.modelId).toBe("fake:cheap");
  });

  it("shows and runs only allowed models once an admin restricts the provider", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const bob = await signIn(database, "bob@example.com");
    expect(
      (await putAccess(database, ada.browser, { provider: "fake", model: "cheap", allowed: true }))
        .status,
    ).toBe(200);
    const restricted = await putAccess(database, ada.browser, {
      provider: "fake",
      restricted: true,
    });
    expect(await restricted.json()).toEqual({
      access: { restrictedProviders: ["fake"], allowedModelIds: ["fake:cheap"] },
    });

    const { models, defaultModelId } = await pickable(database, bob.browser);
    expect(models.map((m) => m.id)).toEqual(["fake:cheap", "demo:demo"]);
    expect(defaultModelId).toBe("fake:cheap");

    await expectRefusedEverywhere(database, bob.browser, "fake:pricey");

    const chatId = await newChat(database, bob.browser);
    const allowed = await send(database, bob.browser, chatId, "fake:cheap");
    expect(allowed.status).toBe(200);
    await readChunks(allowed);
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    expect(fake.requests.map((r) => r.model)).toEqual(["cheap"]);
    expect((await getChat(database.db, chatId))?.modelId).toBe("fake:cheap");
  });

  it("refuses a chat's saved model once it is no longer allowed, and uses an allowed default", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const bob = await signIn(database, "bob@example.com");
    await putAccess(database, ada.browser, { provider: "fake", restricted: false });
    const created = await call(database, chatsRoute.POST, {
      path: "/api/chats",
      method: "POST",
      body: { modelId: "fake:pricey" },
      browser: bob.browser,
    });
    const { chat } = (await created.json()) as { chat: { id: string } };
    await putAccess(database, ada.browser, { provider: "fake", restricted: true });
    const bobId = (await sessionOf(database, bob.browser))?.user.id ?? "";
    const usageBefore = await usageOn(database.db, bobId, usageDayOf(new Date()));
    const refused = await call(database, chatApi.POST, {
      path: "/api/chat",
      method: "POST",
      body: {
        trigger: "submit-message",
        chatId: chat.id,
        message: { id: "u-saved", role: "user", parts: [{ type: "text", text: "hi" }] },
      },
      browser: bob.browser,
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: { message: expect.stringContaining("has not allowed") },
    });
    expect(await loadHistory(database.db, chat.id)).toEqual([]);
    // Refused before anything was taken from the day's quota.
    expect(await usageOn(database.db, bobId, usageDayOf(new Date()))).toEqual(usageBefore);
    // Its ring for the saved model is refused the same way: no window looked up for it.
    const savedRing = await call(database, contextRoute.GET, {
      path: `/api/chats/${chat.id}/context`,
      params: { id: chat.id },
      browser: bob.browser,
    });
    expect(savedRing.status).toBe(400);
    expect(await savedRing.json()).toMatchObject({
      error: { message: expect.stringContaining("has not allowed") },
    });

    // A chat with no model of its own runs on the first allowed one, and its ring says so.
    const plain = await newChat(database, bob.browser);
    const ring = await call(database, contextRoute.GET, {
      path: `/api/chats/${plain}/context`,
      params: { id: plain },
      browser: bob.browser,
    });
    expect(((await ring.json()) as { modelId: string }).modelId).toBe("fake:cheap");
    const answered = await call(database, chatApi.POST, {
      path: "/api/chat",
      method: "POST",
      body: {
        trigger: "submit-message",
        chatId: plain,
        message: { id: "u-default", role: "user", parts: [{ type: "text", text: "hi" }] },
      },
      browser: bob.browser,
    });
    expect(answered.status).toBe(200);
    await readChunks(answered);
    await eventually(async () => !(await isTurnActive(database.db, plain)));
    expect(fake.requests.map((r) => r.model)).toEqual(["cheap"]);
    expect((await getChat(database.db, plain))?.modelId).toBe("fake:cheap");
  });

  it("restricting a provider none of whose models is allowed starts with all it lists allowed, and no change may leave users without a model", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const bob = await signIn(database, "bob@example.com");
    const access = async (body: unknown) => {
      const response = await putAccess(database, ada.browser, body);
      return { status: response.status, body: await response.json() };
    };
    // Nothing allowed on either provider, and neither restricted.
    await access({ provider: "fake", restricted: false });
    for (const model of ["fake-model", "cheap", "pricey"]) {
      await access({ provider: "fake", model, allowed: false });
    }
    await access({ provider: "demo", model: "demo", allowed: false });

    // Ticking "Only allowed models" takes nothing away from users at once.
    expect(await access({ provider: "fake", restricted: true })).toEqual({
      status: 200,
      body: {
        access: {
          restrictedProviders: ["fake"],
          allowedModelIds: ["fake:cheap", "fake:fake-model", "fake:pricey"],
        },
      },
    });
    expect((await access({ provider: "demo", restricted: true })).status).toBe(200);
    const { models, defaultModelId } = await pickable(database, bob.browser);
    expect(models.map((m) => m.id)).toEqual([
      "fake:fake-model",
      "fake:cheap",
      "fake:pricey",
      "demo:demo",
    ]);
    expect(defaultModelId).toBe("fake:fake-model");

    // Unticking goes down to one model, never to none.
    for (const [provider, model] of [
      ["demo", "demo"],
      ["fake", "fake-model"],
      ["fake", "cheap"],
    ]) {
      expect((await access({ provider, model, allowed: false })).status).toBe(200);
    }
    const last = await access({ provider: "fake", model: "pricey", allowed: false });
    expect(last.status).toBe(409);
    expect((last.body as ErrorBody).error).toEqual({
      code: "conflict:last_model",
      message: expect.stringContaining("leave users no model"),
    });
    expect(await pickable(database, bob.browser)).toMatchObject({
      models: [{ id: "fake:pricey" }],
      defaultModelId: "fake:pricey",
    });
    // Restricted again from a page that still showed it open: a provider restricted with nothing
    // allowed stays so, not opened to every model it lists.
    expect((await access({ provider: "demo", restricted: true })).body).toEqual({
      access: { restrictedProviders: ["demo", "fake"], allowedModelIds: ["fake:pricey"] },
    });
    // Restricting again keeps the ticks the provider had: it is not reset to all.
    await access({ provider: "fake", restricted: false });
    expect((await access({ provider: "fake", restricted: true })).body).toEqual({
      access: { restrictedProviders: ["demo", "fake"], allowedModelIds: ["fake:pricey"] },
    });
    await access({ provider: "demo", restricted: false });
    // A provider that does not answer for its list cannot be restricted: nothing could be ticked.
    const gone = await access({ provider: "gone", restricted: true });
    expect(gone.status).toBe(503);
    expect((gone.body as ErrorBody).error.code).toBe("unavailable:model");
    expect((await access({ provider: "fake", restricted: true })).body).toMatchObject({
      access: { restrictedProviders: ["fake"] },
    });
  });

  it("answers 403 to a non-admin and 400 to an unconfigured provider", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const bob = await signIn(database, "bob@example.com");
    expect(
      (await putAccess(database, bob.browser, { provider: "fake", restricted: false })).status,
    ).toBe(403);
    const unknown = await putAccess(database, ada.browser, {
      provider: "nowhere",
      restricted: true,
    });
    expect(unknown.status).toBe(400);
    // A model id padded with a space would allow nothing a user can pick.
    const padded = await putAccess(database, ada.browser, {
      provider: "fake",
      model: " fake-model",
      allowed: true,
    });
    expect(padded.status).toBe(400);
    expect(((await padded.json()) as { error: { message: string } }).error.message).toMatch(
      /model: must not start or end with a space/,
    );
  });

  it("two saves at once, each taking away one of the last two models, leave users one", async () => {
    const database = use();
    // The same admin on two devices, or two admins: the allow-list lock is the same.
    const laptop = (await signIn(database, "ada@example.com")).browser;
    const phone = (await signIn(database, "ada@example.com")).browser;
    const bob = await signIn(database, "bob@example.com");
    const set = async (body: unknown) =>
      expect((await putAccess(database, laptop, body)).status).toBe(200);
    // Users have exactly two models: fake's cheap and pricey.
    await set({ provider: "fake", restricted: false });
    await set({ provider: "demo", restricted: true });
    await set({ provider: "demo", model: "demo", allowed: false });
    await set({ provider: "fake", model: "cheap", allowed: true });
    await set({ provider: "fake", model: "pricey", allowed: true });
    await set({ provider: "fake", model: "fake-model", allowed: false });
    await set({ provider: "fake", restricted: true });
    expect((await pickable(database, bob.browser)).models.map((m) => m.id)).toEqual([
      "fake:cheap",
      "fake:pricey",
    ]);

    const untickBoth = () =>
      Promise.all([
        putAccess(database, laptop, { provider: "fake", model: "cheap", allowed: false }),
        putAccess(database, phone, { provider: "fake", model: "pricey", allowed: false }),
      ]);
    // On Postgres each save is slow to commit: the other's check that a model is left reads the
    // allow-list before it does, unless the allow-list lock keeps the two saves apart.
    const answers =
      driver === "pg"
        ? await whileCommitsSlowed(database.db, "allowed_model", 1_000, untickBoth)
        : await untickBoth();
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect((await pickable(database, bob.browser)).models).toHaveLength(1);
  });
});
