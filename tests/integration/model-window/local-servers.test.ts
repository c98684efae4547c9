import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { upsertOverride } from "@/lib/db/queries/model-overrides";
import {
  deleteObservedWindow,
  getObservedWindow,
  listObservedWindows,
  recordObservedWindow,
} from "@/lib/db/queries/observed-windows";
import { modelObservedWindow, modelOverride } from "@/lib/db/schema";
import {
  CONTEXT_WINDOW_TTL_MS,
  createWindowResolver,
  DEFAULT_WINDOW_TTL_MS,
  LOCAL_WINDOW_TTL_MS,
  type WindowResolver,
} from "@/lib/model-window/window";
import type { ProvidersConfig } from "@/lib/model-window/window-providers";
import { startFakeOpenAI } from "../../fixtures/fake-openai/server.ts";
import type { FakeOpenAI, StartFakeOpenAIOptions } from "../../fixtures/fake-openai/types.ts";
import { describeEachDriver } from "../../helpers/databases";
import { seedChat } from "../../helpers/fixtures";

const MODEL = { id: "llama3.1:8b", maxModelLen: 4096, trainedContext: 131_072 };

/** One fake server per local server (and load state) Fold must tell apart. */
const SERVERS = {
  ollama: { flavor: "ollama" },
  "ollama-idle": { flavor: "ollama", loadState: "not-loaded" },
  "ollama-old": { flavor: "ollama", loadState: "unreported" },
  "ollama-tuned": {
    flavor: "ollama",
    loadState: "unreported",
    models: [{ ...MODEL, numCtx: 8192 }],
  },
  llamacpp: { flavor: "llama.cpp" },
  lmstudio: { flavor: "lm-studio" },
  "lmstudio-idle": { flavor: "lm-studio", loadState: "not-loaded" },
  "lmstudio-jit": { flavor: "lm-studio", loadState: "on-first-request" },
  "ollama-jit": {
    flavor: "ollama",
    loadState: "on-first-request",
    models: [{ ...MODEL, maxModelLen: 32_768 }],
  },
  vllm: { flavor: "openai", models: [{ id: MODEL.id, maxModelLen: 32_768 }] },
} satisfies Record<string, StartFakeOpenAIOptions>;

type Name = keyof typeof SERVERS;
const fakes = new Map<Name, FakeOpenAI>();

beforeAll(async () => {
  for (const [name, options] of Object.entries(SERVERS) as [Name, StartFakeOpenAIOptions][]) {
    fakes.set(name, await startFakeOpenAI({ models: [MODEL], ...options }));
  }
});
afterAll(() => Promise.all([...fakes.values()].map((fake) => fake.close())));

function providers(): ProvidersConfig {
  return {
    openaiApiKey: undefined,
    anthropicApiKey: undefined,
    googleApiKey: undefined,
    openrouterApiKey: undefined,
    openaiCompatible: [
      ...[...fakes.entries()].map(([name, fake]) => ({ name, baseUrl: fake.url })),
      // The same server as ollama-old, with the context its admin configured for it in Fold.
      {
        name: "ollama-configured",
        baseUrl: fakes.get("ollama-old")?.url ?? "",
        assumedContext: 8192,
      },
    ],
  };
}

describeEachDriver("windows of local model servers", (use) => {
  let resolver: WindowResolver;

  beforeEach(async () => {
    await use().db.delete(modelObservedWindow);
    await use().db.delete(modelOverride);
    resolver = createWindowResolver({ db: async () => use().db, providers: providers() });
  });

  describe("the window each server runs the model with, and its source", () => {
    it.each([
      ["ollama", 4096, "loaded", "Ollama, loaded at 4,096 — the model supports 131,072"],
      ["ollama-idle", 4096, "assumed", "Ollama default 4,096 (assumed: server default)"],
      ["ollama-old", 131_072, "trained", "Ollama, trained length 131,072"],
      ["ollama-configured", 8192, "assumed", "Ollama default 8,192 (assumed: server default)"],
      ["ollama-tuned", 8192, "num_ctx", "Ollama, num_ctx 8,192"],
      ["llamacpp", 4096, "loaded", "llama.cpp, loaded at 4,096 — the model supports 131,072"],
      ["lmstudio", 4096, "loaded", "LM Studio, loaded at 4,096 — the model supports 131,072"],
      ["lmstudio-idle", 131_072, "trained", "LM Studio, trained length 131,072"],
      ["vllm", 32_768, "listed", "vLLM API, 32,768"],
    ] as const)("%s: %i (%s)", async (provider, contextWindow, basis, label) => {
      const window = await resolver.resolve(provider, MODEL.id);
      expect(window).toMatchObject({ contextWindow, source: "provider", detail: { basis } });
      const { describeWindow } = await import("@/lib/model-window/window-label");
      expect(describeWindow(window)).toContain(label);
    });
  });

  it("a model the server has not loaded is asked about again within a minute: it may load at far less", async () => {
    fakes.get("lmstudio-jit")?.reset();
    let clock = Date.now();
    const timed = createWindowResolver({
      db: async () => use().db,
      providers: providers(),
      now: () => clock,
    });
    expect(await timed.resolve("lmstudio-jit", MODEL.id)).toMatchObject({
      contextWindow: 131_072,
      detail: { basis: "trained" },
    });
    // The first chat request loads it (LM Studio's just-in-time load), at 4,096.
    const fake = fakes.get("lmstudio-jit");
    const loaded = await fetch(`${fake?.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL.id, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(loaded.status).toBe(200);
    await loaded.text();
    clock += DEFAULT_WINDOW_TTL_MS + 1;
    expect(await timed.resolve("lmstudio-jit", MODEL.id)).toMatchObject({
      contextWindow: 4096,
      detail: { basis: "loaded" },
    });
  });

  it("a model reloaded at another context is seen within minutes, not after an hour", async () => {
    for (const name of ["ollama", "lmstudio"] as const) {
      const fake = fakes.get(name);
      let clock = Date.now();
      const timed = createWindowResolver({
        db: async () => use().db,
        providers: providers(),
        now: () => clock,
      });
      expect(await timed.resolve(name, MODEL.id), name).toMatchObject({ contextWindow: 4096 });
      // Reloaded with a larger context, as Fold's advice says when a chat does not fit.
      fake?.configure({ models: [{ ...MODEL, maxModelLen: 32_768 }] });
      try {
        clock += LOCAL_WINDOW_TTL_MS + 1;
        expect(await timed.resolve(name, MODEL.id), name).toMatchObject({
          contextWindow: 32_768,
          detail: { basis: "loaded" },
        });
      } finally {
        fake?.configure({ models: [MODEL] });
      }
    }
  });

  it("a model its server unloaded when idle is taken to load again at what it was loaded at", async () => {
    const fake = fakes.get("ollama-jit");
    fake?.reset();
    let clock = Date.now();
    const timed = createWindowResolver({
      db: async () => use().db,
      providers: providers(),
      now: () => clock,
    });
    // Never loaded: Ollama's default is all Fold can go by.
    expect(await timed.resolve("ollama-jit", MODEL.id)).toMatchObject({
      contextWindow: 4096,
      detail: { basis: "assumed" },
    });
    // Loaded by a request, at 32,768 (Ollama's own choice, by the memory it has).
    const chat = await fetch(`${fake?.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL.id, messages: [{ role: "user", content: "hi" }] }),
    });
    await chat.text();
    clock += DEFAULT_WINDOW_TTL_MS + 1;
    expect(await timed.resolve("ollama-jit", MODEL.id)).toMatchObject({
      contextWindow: 32_768,
      detail: { basis: "loaded" },
    });
    // Unloaded after its idle minutes: it loads at 32,768 again, not at the default.
    fake?.reset();
    clock += CONTEXT_WINDOW_TTL_MS + 1;
    const window = await timed.resolve("ollama-jit", MODEL.id);
    expect(window).toMatchObject({ contextWindow: 32_768, detail: { basis: "last_loaded" } });
    const { describeWindow } = await import("@/lib/model-window/window-label");
    expect(describeWindow(window)).toContain("loaded at 32,768 when last used");
  });

  describe("a window a silent cut revealed", () => {
    async function observe(provider: string, chainWindow: number) {
      const chat = await seedChat(use().db);
      return recordObservedWindow(use().db, {
        provider,
        model: MODEL.id,
        contextWindow: 4096,
        sentTokens: 6000,
        chainWindow,
        chainSource: "Ollama, trained length 131,072",
        chatId: chat.id,
      });
    }

    it("stands in for the chain's window while the chain still gives the one Fold believed", async () => {
      await observe("ollama-old", 131_072);
      expect(await resolver.resolve("ollama-old", MODEL.id)).toMatchObject({
        contextWindow: 4096,
        source: "observed",
        chain: { contextWindow: 131_072, source: "provider", detail: { basis: "trained" } },
      });
      const inspection = await resolver.inspect("ollama-old", MODEL.id);
      expect(inspection.chain.contextWindow).toBe(131_072);
      expect(inspection.observed).toMatchObject({ contextWindow: 4096, sentTokens: 6000 });
    });

    it("no longer applies once the server reports another window", async () => {
      // Seen while Fold believed 131,072; this server now says it runs 4,096 anyway.
      await observe("ollama", 131_072);
      expect(await resolver.resolve("ollama", MODEL.id)).toMatchObject({
        contextWindow: 4096,
        source: "provider",
        detail: { basis: "loaded" },
      });
    });

    it("loses to an admin override, and can be replaced and forgotten", async () => {
      await observe("ollama-old", 131_072);
      await upsertOverride(use().db, {
        provider: "ollama-old",
        model: MODEL.id,
        contextWindow: 16_384,
        maxOutputTokens: null,
        updatedBy: null,
      });
      expect(await resolver.resolve("ollama-old", MODEL.id)).toMatchObject({
        contextWindow: 16_384,
        source: "override",
      });
      const inspection = await resolver.inspect("ollama-old", MODEL.id);
      expect(inspection.chain).toMatchObject({ contextWindow: 131_072, source: "provider" });

      const replaced = await observe("ollama-old", 131_072);
      expect(replaced.contextWindow).toBe(4096);
      expect(await listObservedWindows(use().db)).toHaveLength(1);
      expect(await deleteObservedWindow(use().db, "ollama-old", MODEL.id)).toBe(true);
      expect(await getObservedWindow(use().db, "ollama-old", MODEL.id)).toBeNull();
    });

    it("keeps its row when the chat it was seen in is deleted", async () => {
      const row = await observe("ollama-old", 131_072);
      const { chat } = await import("@/lib/db/schema");
      const { eq } = await import("drizzle-orm");
      await use()
        .db.delete(chat)
        .where(eq(chat.id, row.chatId ?? ""));
      expect(await getObservedWindow(use().db, "ollama-old", MODEL.id)).toMatchObject({
        contextWindow: 4096,
        chatId: null,
      });
    });
  });
});
