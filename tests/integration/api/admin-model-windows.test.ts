import { afterAll, beforeAll, expect, it, vi } from "vitest";

// Two Ollama servers running a model trained for 131,072 tokens at 4,096: one that answers
// /api/ps with the loaded context, one that cannot tell (no /api/ps).
const servers = await vi.hoisted(async () => {
  const configured = /^(OPENAI|ANTHROPIC|GOOGLE_GENERATIVE_AI|OPENROUTER)_|^DEMO_MODEL$/;
  for (const name of Object.keys(process.env)) {
    if (configured.test(name)) delete process.env[name];
  }
  const { startFakeOpenAI } = await import("../../fixtures/fake-openai/server");
  const models = [{ id: "llama3.1:8b", maxModelLen: 4096, trainedContext: 131_072 }];
  const loaded = await startFakeOpenAI({ flavor: "ollama", models });
  const old = await startFakeOpenAI({ flavor: "ollama", loadState: "unreported", models });
  process.env.OPENAI_COMPATIBLE_BASE_URL = loaded.url;
  process.env.OPENAI_COMPATIBLE_NAME = "ollama";
  process.env.OPENAI_COMPATIBLE_2_BASE_URL = old.url;
  process.env.OPENAI_COMPATIBLE_2_NAME = "ollama-old";
  process.env.DEMO_MODEL = "never";
  return { loaded, old };
});

import * as observedRoute from "@/app/api/admin/models/observed/route";
import * as adminModels from "@/app/api/admin/models/route";
import * as contextRoute from "@/app/api/chats/[id]/context/route";
import type { AdminModel } from "@/lib/admin/models";
import type { Database } from "@/lib/db/client";
import { recordObservedWindow } from "@/lib/db/queries/observed-windows";
import { evictContextWindow, windowResolver } from "@/lib/model-window/window";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import type { Browser } from "../../helpers/http";
import { call } from "../../helpers/http";
import { newChat } from "../../helpers/turns";

const MODEL = "llama3.1:8b";

afterAll(async () => {
  await servers.loaded.close();
  await servers.old.close();
});

async function row(database: Database, browser: Browser, id: string): Promise<AdminModel> {
  const response = await call(database, adminModels.GET, { path: "/api/admin/models", browser });
  expect(response.status).toBe(200);
  const { models } = (await response.json()) as { models: AdminModel[] };
  const found = models.find((m) => m.id === id);
  if (!found) throw new Error(`${id} is not listed: ${models.map((m) => m.id).join(", ")}`);
  return found;
}

function forget(database: Database, browser: Browser, provider: string) {
  return call(database, observedRoute.DELETE, {
    path: "/api/admin/models/observed",
    method: "DELETE",
    body: { provider, model: MODEL },
    browser,
  });
}

describeEachDriver("the three windows on Admin → Models and on the ring", (use) => {
  let admin: Browser;
  let user: Browser;

  beforeAll(async () => {
    windowResolver().clear();
    ({ browser: admin } = await register(use(), "admin@example.com"));
    ({ browser: user } = await register(use(), "user@example.com"));
  });

  it("shows the trained and the loaded window side by side, each with its source", async () => {
    const model = await row(use(), admin, `ollama:${MODEL}`);
    expect(model).toMatchObject({ contextWindow: 4096, source: "provider" });
    expect(model.windows).toEqual({
      label: "Ollama, loaded at 4,096 — the model supports 131,072",
      trained: { tokens: 131_072, from: "Ollama, model's trained length" },
      loaded: { tokens: 4096, from: "Ollama, loaded at 4,096" },
      observed: null,
    });
  });

  it("shows an observed window in use, with the fix, and forgets it on the admin's word", async () => {
    const database = use();
    const before = await row(database, admin, `ollama-old:${MODEL}`);
    expect(before.windows).toMatchObject({
      trained: { tokens: 131_072 },
      loaded: null,
      observed: null,
    });

    await recordObservedWindow(database.db, {
      provider: "ollama-old",
      model: MODEL,
      contextWindow: 4096,
      sentTokens: 6120,
      chainWindow: 131_072,
      chainSource: "Ollama, trained length 131,072",
    });
    evictContextWindow("ollama-old", MODEL);
    const seen = await row(database, admin, `ollama-old:${MODEL}`);
    expect(seen).toMatchObject({ contextWindow: 4096, source: "observed" });
    expect(seen.windows.observed).toMatchObject({
      tokens: 4096,
      sentTokens: 6120,
      believed: "Ollama, trained length 131,072",
      status: "in use",
    });
    expect(seen.windows.observed?.fix).toContain("OLLAMA_CONTEXT_LENGTH");

    expect((await forget(database, user, "ollama-old")).status).toBe(403);
    const forgotten = await forget(database, admin, "ollama-old");
    expect(forgotten.status).toBe(200);
    const { model } = (await forgotten.json()) as { model: AdminModel };
    expect(model).toMatchObject({ contextWindow: 131_072, source: "provider" });
    expect(model.windows.observed).toBeNull();
  });

  it("the ring's hover card names the window in use", async () => {
    const database = use();
    const chatId = await newChat(database, user);
    const response = await call(database, contextRoute.GET, {
      path: `/api/chats/${chatId}/context?modelId=ollama:${encodeURIComponent(MODEL)}`,
      params: { id: chatId },
      browser: user,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      contextWindow: 4096,
      source: "provider",
      windowLabel: "Ollama, loaded at 4,096 — the model supports 131,072",
    });
  });
});
