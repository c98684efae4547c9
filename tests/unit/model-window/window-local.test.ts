import { afterEach, describe, expect, it } from "vitest";
import { windowLayers } from "@/lib/model-window/window-label";
import { type LocalReport, localWindow, pickReport } from "@/lib/model-window/window-local";
import { createProviderLookups, type ProvidersConfig } from "@/lib/model-window/window-providers";
import { lmStudioReport, ollamaReport } from "@/lib/model-window/window-servers";
import type { ProviderWindow } from "@/lib/model-window/window-types";
import { startFakeOpenAI } from "../../fixtures/fake-openai/server.ts";
import type { FakeOpenAI, StartFakeOpenAIOptions } from "../../fixtures/fake-openai/types.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

const OLLAMA: LocalReport = {
  server: "ollama",
  trained: 131_072,
  loaded: null,
  configured: null,
  notLoaded: false,
  serverDefault: 4096,
};

describe("localWindow: the context the server runs the model with comes first", () => {
  it("a loaded context wins over everything the model card says", () => {
    expect(localWindow({ ...OLLAMA, loaded: 4096, configured: 8192 }, 16_384)).toEqual({
      contextWindow: 4096,
      maxOutputTokens: null,
      detail: { server: "ollama", basis: "loaded" },
      trainedWindow: 131_072,
    });
  });

  it("a model loaded at its trained length still says what it was trained for", () => {
    // The admin page's Trained column reads it (windowLayers): "—" said the server never told.
    const atTrained = localWindow({ ...OLLAMA, loaded: 131_072 }, undefined);
    expect(atTrained).toMatchObject({ contextWindow: 131_072, trainedWindow: 131_072 });
    expect(windowLayers({ ...(atTrained as ProviderWindow), source: "provider" })).toEqual({
      trained: { tokens: 131_072, from: "Ollama, model's trained length" },
      loaded: { tokens: 131_072, from: "Ollama, loaded at 131,072" },
    });
  });

  it("then the Modelfile's num_ctx, never above the trained length", () => {
    expect(localWindow({ ...OLLAMA, configured: 8192 }, undefined)?.contextWindow).toBe(8192);
    expect(localWindow({ ...OLLAMA, configured: 1_000_000 }, undefined)).toMatchObject({
      contextWindow: 131_072,
      detail: { basis: "num_ctx" },
    });
  });

  it("a model the server says is not loaded will load at the configured or the server's default", () => {
    const notLoaded = { ...OLLAMA, notLoaded: true };
    expect(localWindow(notLoaded, undefined)).toMatchObject({
      contextWindow: 4096,
      detail: { server: "ollama", basis: "assumed" },
      trainedWindow: 131_072,
    });
    expect(localWindow(notLoaded, 32_768)?.contextWindow).toBe(32_768);
  });

  it("a model unloaded since it was seen loaded loads at that again, unless the admin configured the server's", () => {
    const unloaded = { ...OLLAMA, notLoaded: true, lastLoaded: 32_768 };
    expect(localWindow(unloaded, undefined)).toMatchObject({
      contextWindow: 32_768,
      detail: { basis: "last_loaded", notLoaded: true },
    });
    expect(localWindow(unloaded, 8192)).toMatchObject({
      contextWindow: 8192,
      detail: { basis: "assumed" },
    });
  });

  it("a server that cannot tell takes only a configured default, else the trained length", () => {
    expect(localWindow(OLLAMA, 16_384)).toMatchObject({
      contextWindow: 16_384,
      detail: { basis: "assumed" },
    });
    expect(localWindow(OLLAMA, undefined)).toEqual({
      contextWindow: 131_072,
      maxOutputTokens: null,
      detail: { server: "ollama", basis: "trained" },
      trainedWindow: 131_072,
    });
  });

  it("says nothing when the server knows no number at all", () => {
    expect(localWindow({ ...OLLAMA, trained: null }, undefined)).toBeNull();
  });

  it("prefers the report that knows the loaded context", () => {
    const llamaCpp: LocalReport = { ...OLLAMA, server: "llama.cpp", loaded: 8192 };
    expect(pickReport([OLLAMA, null, llamaCpp])?.server).toBe("llama.cpp");
    expect(pickReport([null, OLLAMA])?.server).toBe("ollama");
    expect(pickReport([null, null])).toBeNull();
  });
});

function config(server: ProvidersConfig["openaiCompatible"][number]): ProvidersConfig {
  return {
    openaiApiKey: undefined,
    anthropicApiKey: undefined,
    googleApiKey: undefined,
    openrouterApiKey: undefined,
    openaiCompatible: [server],
  };
}

async function lookupOn(
  options: StartFakeOpenAIOptions,
  assumedContext?: number,
): Promise<{ window: unknown; fake: FakeOpenAI }> {
  const fake = await startFakeOpenAI(options);
  cleanups.push(() => fake.close());
  const lookups = createProviderLookups(
    config({ name: "local", baseUrl: fake.url, ...(assumedContext ? { assumedContext } : {}) }),
    { fetch: globalThis.fetch, now: Date.now, timeoutMs: 5_000 },
  );
  const model = options.models?.[0]?.id ?? "fake-model";
  return { window: await lookups.get("local")?.(model, AbortSignal.timeout(5_000)), fake };
}

const LLAMA = { id: "llama3.1:8b", maxModelLen: 4096, trainedContext: 131_072 };

describe("each local server, as the fake server imitates it", () => {
  it("Ollama with the model loaded: /api/ps's context_length", async () => {
    const { window } = await lookupOn({ flavor: "ollama", models: [LLAMA] });
    expect(window).toEqual({
      contextWindow: 4096,
      maxOutputTokens: null,
      detail: { server: "ollama", basis: "loaded" },
      trainedWindow: 131_072,
    });
  });

  it("Ollama with the model not loaded: the server default, assumed", async () => {
    const { window } = await lookupOn({
      flavor: "ollama",
      loadState: "not-loaded",
      models: [{ ...LLAMA, maxModelLen: 8192 }],
    });
    expect(window).toMatchObject({ contextWindow: 4096, detail: { basis: "assumed" } });
  });

  it("Ollama whose Modelfile sets num_ctx, not loaded: num_ctx", async () => {
    const { window } = await lookupOn({
      flavor: "ollama",
      loadState: "not-loaded",
      models: [{ ...LLAMA, numCtx: 16_384 }],
    });
    expect(window).toMatchObject({ contextWindow: 16_384, detail: { basis: "num_ctx" } });
  });

  it("Ollama without /api/ps: the configured default, else the trained length", async () => {
    const options: StartFakeOpenAIOptions = {
      flavor: "ollama",
      loadState: "unreported",
      models: [LLAMA],
    };
    expect((await lookupOn(options)).window).toMatchObject({
      contextWindow: 131_072,
      detail: { basis: "trained" },
    });
    expect((await lookupOn(options, 8192)).window).toMatchObject({
      contextWindow: 8192,
      detail: { basis: "assumed" },
    });
  });

  it("an older Ollama listing the model loaded without its context: the server default, as if not loaded", async () => {
    // Ollama before July 2025: /api/ps has no context_length.
    const fetch = async (input: RequestInfo | URL) =>
      String(input).endsWith("/api/show")
        ? Response.json({ model_info: { "llama.context_length": 131_072 } })
        : Response.json({ models: [{ name: "llama3.1:8b", model: "llama3.1:8b" }] });
    const report = await ollamaReport({
      fetch,
      root: "http://ollama.invalid",
      model: "llama3.1:8b",
      signal: AbortSignal.timeout(5_000),
    });
    expect(report).toMatchObject({ loaded: null, notLoaded: true });
    expect(localWindow(report as LocalReport, undefined)).toMatchObject({
      contextWindow: 4096,
      detail: { basis: "assumed" },
    });
  });

  it("Ollama whose /api/ps has an odd entry for another model: the loaded context still", async () => {
    const fetch = async (input: RequestInfo | URL) =>
      String(input).endsWith("/api/show")
        ? Response.json({ model_info: { "llama.context_length": 131_072 } })
        : Response.json({
            models: [
              { name: "nomic-embed-text:latest", context_length: 0 },
              "garbage",
              { name: "llama3.1:8b", model: "llama3.1:8b", context_length: 4096 },
            ],
          });
    const report = await ollamaReport({
      fetch,
      root: "http://ollama.invalid",
      model: "llama3.1:8b",
      signal: AbortSignal.timeout(5_000),
    });
    expect(report).toMatchObject({ loaded: 4096, notLoaded: false });
  });

  it("llama.cpp: /props's n_ctx, with the trained length from /v1/models", async () => {
    const { window } = await lookupOn({ flavor: "llama.cpp", models: [LLAMA] });
    expect(window).toEqual({
      contextWindow: 4096,
      maxOutputTokens: null,
      detail: { server: "llama.cpp", basis: "loaded" },
      trainedWindow: 131_072,
    });
  });

  it("LM Studio: loaded_context_length, or max_context_length when not loaded", async () => {
    const loaded = await lookupOn({ flavor: "lm-studio", models: [LLAMA] });
    expect(loaded.window).toMatchObject({
      contextWindow: 4096,
      detail: { server: "lm-studio", basis: "loaded" },
      trainedWindow: 131_072,
    });
    const idle = await lookupOn({ flavor: "lm-studio", loadState: "not-loaded", models: [LLAMA] });
    expect(idle.window).toMatchObject({ contextWindow: 131_072, detail: { basis: "trained" } });
  });

  it("vLLM: max_model_len from /v1/models, without asking anything else", async () => {
    const { window, fake } = await lookupOn({ models: [{ id: "m", maxModelLen: 32_768 }] });
    expect(window).toEqual({
      contextWindow: 32_768,
      maxOutputTokens: null,
      detail: { server: "vllm", basis: "listed" },
    });
    expect(fake.requests).toHaveLength(0);
  });
});

describe("lmStudioReport: the model id names a model, never another path", () => {
  it("asks nothing for an id with a `.` or `..` segment", async () => {
    const asked: string[] = [];
    const fetch = (async (url: string) => {
      asked.push(String(url));
      return new Response("{}", { status: 404 });
    }) as unknown as typeof globalThis.fetch;
    const target = { fetch, root: "http://127.0.0.1:1", signal: new AbortController().signal };
    for (const model of ["../../v1/admin", "org/./model", "a/.."]) {
      expect(await lmStudioReport({ ...target, model })).toBeNull();
    }
    expect(asked).toEqual([]);
    await lmStudioReport({ ...target, model: "org/model.v2" });
    expect(asked).toEqual(["http://127.0.0.1:1/api/v0/models/org/model.v2"]);
  });
});
