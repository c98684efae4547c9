import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { DEMO_CONTEXT_WINDOW, DEMO_MAX_OUTPUT_TOKENS } from "@/lib/ai/demo-model";
import { MODEL_LIST_RETRY_MS } from "@/lib/ai/remote-models";
import { type Database, openDatabase } from "@/lib/db/client";
import { migrateDatabase } from "@/lib/db/migrate";
import { deleteOverride, upsertOverride } from "@/lib/db/queries/model-overrides";
import { modelOverride } from "@/lib/db/schema";
import { log } from "@/lib/log";
import { BUNDLED_CATALOG } from "@/lib/model-window/catalog";
import {
  CONTEXT_WINDOW_TTL_MS,
  createWindowResolver,
  DEFAULT_CONTEXT_WINDOW,
  DEFAULT_WINDOW_TTL_MS,
  type WindowResolverOptions,
} from "@/lib/model-window/window";
import type { ProvidersConfig } from "@/lib/model-window/window-providers";
import { type FakeOpenAI, startFakeOpenAI } from "../../fixtures/fake-openai/server.ts";

let database: Database;
let fake: FakeOpenAI;

beforeAll(async () => {
  database = await openDatabase({ pgliteDir: "memory://" });
  await migrateDatabase(database);
  fake = await startFakeOpenAI({ models: [{ id: "m", maxModelLen: 32_768 }] });
});

afterAll(async () => {
  await fake.close();
  await database.close();
});

afterEach(async () => {
  vi.restoreAllMocks();
  await database.db.delete(modelOverride);
});

const gpt4o = BUNDLED_CATALOG.openai?.models["gpt-4o"]?.limit ?? {};

function providers(patch: Partial<ProvidersConfig> = {}): ProvidersConfig {
  return {
    openaiApiKey: undefined,
    anthropicApiKey: undefined,
    googleApiKey: undefined,
    openrouterApiKey: undefined,
    openaiCompatible: [],
    ...patch,
  };
}

/** The global fetch (or a stub), counting the requests each URL gets. */
function countingFetch(respond?: (url: string) => Response | Promise<Response>) {
  const urls: string[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const url = String(input);
    urls.push(url);
    return respond ? respond(url) : globalThis.fetch(input, init);
  };
  return { urls, fetch };
}

/** A Google API stub answering every model with the given limits. */
function googleStub(input: number, output: number) {
  return countingFetch(() => Response.json({ inputTokenLimit: input, outputTokenLimit: output }));
}

function resolverWith(options: Partial<WindowResolverOptions> = {}) {
  return createWindowResolver({
    db: async () => database.db,
    providers: providers({ openaiCompatible: [{ name: "local", baseUrl: fake.url }] }),
    ...options,
  });
}

/** A base URL whose port nothing listens on. */
async function unreachableUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

describe("the resolution chain: each source in its turn", () => {
  it("an override beats the provider", async () => {
    await upsertOverride(database.db, {
      provider: "local",
      model: "m",
      contextWindow: 4096,
      maxOutputTokens: 512,
      updatedBy: null,
    });
    const { urls, fetch } = countingFetch();
    expect(await resolverWith({ fetch }).resolve("local", "m")).toEqual({
      contextWindow: 4096,
      maxOutputTokens: 512,
      source: "override",
      outputOverride: { modelLimit: null },
    });
    expect(urls).toEqual([]);
  });

  it("the provider's /v1/models max_model_len beats the catalog", async () => {
    expect(await resolverWith().resolve("local", "m")).toEqual({
      contextWindow: 32_768,
      maxOutputTokens: null,
      source: "provider",
      detail: { server: "vllm", basis: "listed" },
    });
  });

  it("the provider answers for OpenRouter and Google", async () => {
    const openrouter = countingFetch(() =>
      Response.json({
        data: [
          { id: "x/y", context_length: 65_536, top_provider: { max_completion_tokens: 4096 } },
        ],
      }),
    );
    const viaOpenRouter = resolverWith({
      providers: providers({ openrouterApiKey: "k" }),
      fetch: openrouter.fetch,
    });
    expect(await viaOpenRouter.resolve("openrouter", "x/y")).toEqual({
      contextWindow: 65_536,
      maxOutputTokens: 4096,
      source: "provider",
      detail: { server: "openrouter", basis: "listed" },
    });

    const google = googleStub(2_000_000, 8192);
    const viaGoogle = resolverWith({
      providers: providers({ googleApiKey: "k" }),
      fetch: google.fetch,
    });
    expect(await viaGoogle.resolve("google", "gemini-x")).toEqual({
      contextWindow: 2_000_000,
      maxOutputTokens: 8192,
      source: "provider",
      detail: { server: "google", basis: "listed" },
    });
  });

  it("the demo provider answers with the demo model's own limits", async () => {
    expect(await resolverWith().resolve("demo", "demo")).toEqual({
      contextWindow: DEMO_CONTEXT_WINDOW,
      maxOutputTokens: DEMO_MAX_OUTPUT_TOKENS,
      source: "provider",
      detail: { server: "demo", basis: "listed" },
    });
  });

  it("the catalog answers when the provider publishes nothing", async () => {
    const info = vi.spyOn(log, "info");
    expect(gpt4o.context).toBe(128_000);
    expect(await resolverWith().resolve("openai", "gpt-4o")).toEqual({
      contextWindow: 128_000,
      maxOutputTokens: gpt4o.output,
      source: "catalog",
      matchedId: "openai:gpt-4o",
    });
    expect(info).not.toHaveBeenCalledWith(
      expect.objectContaining({ metric: "context_window.default" }),
      "context_window.default",
    );
  });

  it("the catalog answers when the provider does not know the model", async () => {
    const window = await resolverWith().resolve("local", "gpt-4o-mini");
    expect(window).toMatchObject({ source: "catalog", matchedId: "openai:gpt-4o-mini" });
  });

  it("the default answers last, with source default, and logs the metric", async () => {
    const info = vi.spyOn(log, "info");
    const resolver = resolverWith({
      providers: providers({
        openaiCompatible: [{ name: "gone", baseUrl: await unreachableUrl() }],
      }),
    });
    expect(await resolver.resolve("gone", "mystery-model-7b")).toEqual({
      contextWindow: DEFAULT_CONTEXT_WINDOW,
      maxOutputTokens: null,
      source: "default",
    });
    expect(DEFAULT_CONTEXT_WINDOW).toBe(8192);
    expect(info).toHaveBeenCalledWith(
      { metric: "context_window.default", provider: "gone", model: "mystery-model-7b" },
      "context_window.default",
    );
  });

  it("gpt-4.5-preview gets the default, not gpt-4's catalog window", async () => {
    const window = await resolverWith().resolve("openai", "gpt-4.5-preview");
    expect(window).toEqual({ contextWindow: 8192, maxOutputTokens: null, source: "default" });
    expect(window.matchedId).toBeUndefined();
  });
});

describe("partial overrides", () => {
  it("a window-only override takes the output limit from the rest of the chain", async () => {
    await upsertOverride(database.db, {
      provider: "openai",
      model: "gpt-4o",
      contextWindow: 64_000,
      maxOutputTokens: null,
      updatedBy: null,
    });
    expect(await resolverWith().resolve("openai", "gpt-4o")).toEqual({
      contextWindow: 64_000,
      maxOutputTokens: gpt4o.output,
      source: "override",
    });
  });

  it("an output-only override keeps the window and its source from the rest of the chain", async () => {
    await upsertOverride(database.db, {
      provider: "local",
      model: "m",
      contextWindow: null,
      maxOutputTokens: 2048,
      updatedBy: null,
    });
    expect(await resolverWith().resolve("local", "m")).toEqual({
      contextWindow: 32_768,
      maxOutputTokens: 2048,
      source: "provider",
      detail: { server: "vllm", basis: "listed" },
      // What the server says of the model's own limit, beside the admin's.
      outputOverride: { modelLimit: null },
    });
  });

  it("an output-only override over a default window still logs the default", async () => {
    const info = vi.spyOn(log, "info");
    await upsertOverride(database.db, {
      provider: "openai",
      model: "gpt-unknown",
      contextWindow: null,
      maxOutputTokens: 1000,
      updatedBy: null,
    });
    expect(await resolverWith().resolve("openai", "gpt-unknown")).toEqual({
      contextWindow: DEFAULT_CONTEXT_WINDOW,
      maxOutputTokens: 1000,
      source: "default",
      outputOverride: { modelLimit: null },
    });
    expect(info).toHaveBeenCalledWith(
      expect.objectContaining({ metric: "context_window.default" }),
      "context_window.default",
    );
  });
});

describe("caching", () => {
  it("holds a resolved window: the second lookup makes no provider call", async () => {
    const { urls, fetch } = googleStub(1_000_000, 8192);
    const resolver = resolverWith({ providers: providers({ googleApiKey: "k" }), fetch });
    const first = await resolver.resolve("google", "gemini-x");
    expect(await resolver.resolve("google", "gemini-x")).toEqual(first);
    expect(urls).toHaveLength(1);
  });

  it("keeps a real window for an hour and a default one for 60 s", async () => {
    let clock = 0;
    const google = googleStub(1_000_000, 8192);
    const resolver = resolverWith({
      providers: providers({ googleApiKey: "k" }),
      fetch: google.fetch,
      now: () => clock,
    });
    const db = vi.fn(async () => database.db);
    const counted = createWindowResolver({
      db,
      providers: providers(),
      now: () => clock,
    });

    await resolver.resolve("google", "gemini-x");
    expect((await counted.resolve("local", "unknown-thing")).source).toBe("default");
    expect(db).toHaveBeenCalledTimes(1);

    clock = DEFAULT_WINDOW_TTL_MS - 1;
    await counted.resolve("local", "unknown-thing");
    expect(db).toHaveBeenCalledTimes(1);
    clock = DEFAULT_WINDOW_TTL_MS;
    await counted.resolve("local", "unknown-thing");
    expect(db).toHaveBeenCalledTimes(2);

    clock = CONTEXT_WINDOW_TTL_MS - 1;
    await resolver.resolve("google", "gemini-x");
    expect(google.urls).toHaveLength(1);
    clock = CONTEXT_WINDOW_TTL_MS;
    await resolver.resolve("google", "gemini-x");
    expect(google.urls).toHaveLength(2);
  });

  it("keeps what stood in for a server that did not answer only as long as a guess", async () => {
    let clock = 0;
    let serverUp = false;
    // A local server restarting: its model list fails, then answers.
    const { urls, fetch } = countingFetch(() =>
      serverUp
        ? Response.json({ data: [{ id: "gpt-4o", object: "model", max_model_len: 16_384 }] })
        : Promise.reject(new TypeError("fetch failed")),
    );
    const resolver = resolverWith({
      providers: providers({
        openaiCompatible: [{ name: "local", baseUrl: "http://127.0.0.1:9/v1" }],
      }),
      fetch,
      now: () => clock,
    });
    // The catalog knows a model of that name, with another window than this server runs.
    const first = await resolver.resolve("local", "gpt-4o");
    expect(first.source).toBe("catalog");
    expect(first.contextWindow).toBe(gpt4o.context);
    const asked = urls.length;

    serverUp = true;
    clock = DEFAULT_WINDOW_TTL_MS - 1;
    expect((await resolver.resolve("local", "gpt-4o")).source).toBe("catalog");
    expect(urls).toHaveLength(asked);
    clock = DEFAULT_WINDOW_TTL_MS;
    const second = await resolver.resolve("local", "gpt-4o");
    expect(second).toMatchObject({ source: "provider", contextWindow: 16_384 });
  });

  it("keeps what stood in for a model list that answered an error only as long as a guess", async () => {
    let clock = 0;
    let serverUp = false;
    // A vLLM behind a proxy, busy for a moment: its list answers 503, its other paths 404.
    const { fetch } = countingFetch((url) =>
      url.endsWith("/v1/models")
        ? serverUp
          ? Response.json({ data: [{ id: "gpt-4o", max_model_len: 16_384 }] })
          : new Response("upstream busy", { status: 503 })
        : new Response("Not Found", { status: 404 }),
    );
    const resolver = resolverWith({
      providers: providers({
        openaiCompatible: [{ name: "local", baseUrl: "http://vllm.invalid/v1" }],
      }),
      fetch,
      now: () => clock,
    });
    expect((await resolver.resolve("local", "gpt-4o")).source).toBe("catalog");

    serverUp = true;
    clock = DEFAULT_WINDOW_TTL_MS + MODEL_LIST_RETRY_MS;
    expect(await resolver.resolve("local", "gpt-4o")).toMatchObject({
      source: "provider",
      contextWindow: 16_384,
    });
  });

  it("evicting after an override edit takes effect on the next request", async () => {
    const resolver = resolverWith();
    expect((await resolver.resolve("local", "m")).contextWindow).toBe(32_768);

    await upsertOverride(database.db, {
      provider: "local",
      model: "m",
      contextWindow: 16_000,
      maxOutputTokens: null,
      updatedBy: null,
    });
    expect((await resolver.resolve("local", "m")).contextWindow).toBe(32_768); // still cached
    resolver.evict("local", "m");
    expect(await resolver.resolve("local", "m")).toMatchObject({
      contextWindow: 16_000,
      source: "override",
    });

    await deleteOverride(database.db, "local", "m");
    resolver.evict("local", "m");
    expect(await resolver.resolve("local", "m")).toMatchObject({
      contextWindow: 32_768,
      source: "provider",
    });
  });

  it("an eviction during a lookup keeps that lookup's result out of the cache", async () => {
    const { promise: gate, resolve: release } = Promise.withResolvers<void>();
    let calls = 0;
    const { fetch } = countingFetch(async () => {
      calls++;
      await gate;
      return Response.json({ inputTokenLimit: 100_000 + calls, outputTokenLimit: 8192 });
    });
    const resolver = resolverWith({ providers: providers({ googleApiKey: "k" }), fetch });
    const stale = resolver.resolve("google", "gemini-x");
    await vi.waitFor(() => expect(calls).toBe(1));
    resolver.evict("google", "gemini-x");
    release();
    expect((await stale).contextWindow).toBe(100_001);
    expect((await resolver.resolve("google", "gemini-x")).contextWindow).toBe(100_002);
  });

  it("does not cache a failed lookup", async () => {
    let broken = true;
    const resolver = resolverWith({
      db: async () => {
        if (broken) throw new Error("database down");
        return database.db;
      },
    });
    await expect(resolver.resolve("local", "m")).rejects.toThrow("database down");
    broken = false;
    expect((await resolver.resolve("local", "m")).source).toBe("provider");
  });

  it("returns copies, so a caller cannot change the cached window", async () => {
    const resolver = resolverWith();
    const first = await resolver.resolve("local", "m");
    first.contextWindow = 1;
    expect((await resolver.resolve("local", "m")).contextWindow).toBe(32_768);
  });
});

describe("single flight and timeouts", () => {
  it("concurrent cold lookups share one resolution and one provider call", async () => {
    const { urls, fetch } = googleStub(1_000_000, 8192);
    const db = vi.fn(async () => database.db);
    const resolver = resolverWith({ db, providers: providers({ googleApiKey: "k" }), fetch });
    const windows = await Promise.all(
      Array.from({ length: 8 }, () => resolver.resolve("google", "gemini-x")),
    );
    expect(new Set(windows.map((w) => w.contextWindow))).toEqual(new Set([1_000_000]));
    expect(urls).toHaveLength(1);
    expect(db).toHaveBeenCalledTimes(1);
  });

  it("a provider that hangs times out to the catalog", async () => {
    const hang: typeof globalThis.fetch = () => new Promise<Response>(() => {});
    const resolver = resolverWith({
      providers: providers({ googleApiKey: "k" }),
      fetch: hang,
      timeoutMs: 50,
    });
    const started = performance.now();
    expect(await resolver.resolve("google", "gemini-2.5-pro")).toMatchObject({
      source: "catalog",
      matchedId: "google:gemini-2.5-pro",
    });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("a hung OpenAI-compatible server times out to the default", async () => {
    const hang: typeof globalThis.fetch = () => new Promise<Response>(() => {});
    const resolver = resolverWith({ fetch: hang, timeoutMs: 50 });
    const started = performance.now();
    expect((await resolver.resolve("local", "mystery-model-7b")).source).toBe("default");
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
