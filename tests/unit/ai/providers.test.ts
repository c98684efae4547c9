import { streamText } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEMO_CONTEXT_WINDOW } from "@/lib/ai/demo-model";
import {
  createProviderRegistry,
  DEMO_MODEL_LABEL,
  defaultModelId,
  type ModelInfo,
  parseModelId,
} from "@/lib/ai/providers";
import { MODEL_LIST_RETRY_MS, MODEL_LIST_TTL_MS } from "@/lib/ai/remote-models";
import { loadEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { type FakeOpenAI, startFakeOpenAI } from "../../fixtures/fake-openai/server.ts";

const quiet = () => undefined;
const envOf = (vars: Record<string, string>) => loadEnv(vars, quiet);

const servers: FakeOpenAI[] = [];
async function start(options?: Parameters<typeof startFakeOpenAI>[0]): Promise<FakeOpenAI> {
  const server = await startFakeOpenAI(options);
  servers.push(server);
  return server;
}

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** The global fetch, recording every URL it is asked for. */
function recordingFetch() {
  const urls: string[] = [];
  const fetchSpy: typeof fetch = (input, init) => {
    urls.push(input instanceof Request ? input.url : String(input));
    return fetch(input, init);
  };
  return { urls, fetch: fetchSpy };
}

const ids = (models: ModelInfo[]) => models.map((m) => m.id);

describe("parseModelId", () => {
  it("splits on the first colon, so model names may contain colons", () => {
    expect(parseModelId("openai:gpt-4o")).toEqual({ provider: "openai", model: "gpt-4o" });
    expect(parseModelId("local:llama3.1:8b")).toEqual({ provider: "local", model: "llama3.1:8b" });
    expect(parseModelId("openrouter:meta-llama/llama-3.1-8b-instruct:free")).toEqual({
      provider: "openrouter",
      model: "meta-llama/llama-3.1-8b-instruct:free",
    });
  });

  it.each(["", "gpt-4o", ":gpt-4o", "openai:", "openai: ", "Open AI:gpt-4o", " openai:gpt-4o"])(
    "rejects %j",
    (id) => {
      expect(parseModelId(id)).toBeNull();
    },
  );
});

describe("demo model availability", () => {
  it("is the only model when no provider is configured", async () => {
    const registry = createProviderRegistry(envOf({}));
    const models = await registry.listModels();
    expect(models).toEqual([
      {
        id: "demo:demo",
        provider: "demo",
        model: "demo",
        label: DEMO_MODEL_LABEL,
        providerLabel: "Demo",
        contextWindow: DEMO_CONTEXT_WINDOW,
        maxOutputTokens: expect.any(Number),
      },
    ]);
    expect(DEMO_MODEL_LABEL).toBe("Demo (offline)");
    expect(models[0]?.contextWindow).toBe(8192);
    expect(defaultModelId(models)).toBe("demo:demo");
    expect(registry.getLanguageModel("demo:demo").provider).toBe("demo");
  });

  it("disappears in auto mode once a provider is configured", async () => {
    const registry = createProviderRegistry(envOf({ OPENAI_API_KEY: "sk-test" }));
    const models = await registry.listModels();
    expect(registry.providers.map((p) => p.id)).toEqual(["openai"]);
    expect(ids(models)).toContain("openai:gpt-4.1");
    expect(ids(models)).not.toContain("demo:demo");
    expect(() => registry.getLanguageModel("demo:demo")).toThrow(AppError);
  });

  it("is listed last with DEMO_MODEL=always, and is not the default then", async () => {
    const registry = createProviderRegistry(
      envOf({
        DEMO_MODEL: "always",
        ANTHROPIC_API_KEY: "sk-ant",
        GOOGLE_GENERATIVE_AI_API_KEY: "g",
      }),
    );
    const models = await registry.listModels();
    expect(registry.providers.map((p) => p.id)).toEqual(["anthropic", "google", "demo"]);
    expect(models.at(-1)?.label).toBe("Demo (offline)");
    expect(defaultModelId(models)).toBe("anthropic:claude-sonnet-4-5");
    expect(await registry.resolveDefaultModelId()).toBe("anthropic:claude-sonnet-4-5");
  });

  it("is never offered with DEMO_MODEL=never, leaving no default", async () => {
    const registry = createProviderRegistry(envOf({ DEMO_MODEL: "never" }));
    expect(await registry.listModels()).toEqual([]);
    expect(defaultModelId([])).toBeNull();
    await expect(registry.resolveDefaultModelId()).rejects.toMatchObject({
      code: "unavailable:model",
    });
  });
});

describe("getLanguageModel", () => {
  it("throws bad_request:model for a provider that is not configured", () => {
    const registry = createProviderRegistry(envOf({}));
    for (const id of ["openai:gpt-4o", "nope:model", "no-colon", "demo:other"]) {
      let thrown: unknown;
      try {
        registry.getLanguageModel(id);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, id).toBeInstanceOf(AppError);
      expect(thrown, id).toMatchObject({ code: "bad_request:model", status: 400 });
      expect((thrown as AppError).message, id).toContain(id);
    }
  });

  it("builds the model of each configured provider", () => {
    const registry = createProviderRegistry(
      envOf({
        OPENAI_API_KEY: "sk",
        ANTHROPIC_API_KEY: "sk-ant",
        GOOGLE_GENERATIVE_AI_API_KEY: "g",
        OPENROUTER_API_KEY: "or",
        OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1",
      }),
    );
    const cases = {
      "openai:gpt-4o": "gpt-4o",
      "anthropic:claude-haiku-4-5": "claude-haiku-4-5",
      "google:gemini-2.5-flash": "gemini-2.5-flash",
      "openrouter:openai/gpt-4o:free": "openai/gpt-4o:free",
      "local:llama3.1:8b": "llama3.1:8b",
    };
    for (const [id, modelId] of Object.entries(cases)) {
      const model = registry.getLanguageModel(id);
      expect(model.specificationVersion, id).toBe("v4");
      expect(model.modelId, id).toBe(modelId);
    }
  });
});

describe("listModels from OpenAI-compatible servers", () => {
  it.each(["", "/"])(
    "reads /v1/models exactly once for a base URL ending in /v1%s",
    async (suffix) => {
      const server = await start({
        models: [
          { id: "qwen3:8b", maxModelLen: 32_768 },
          { id: "tiny", maxModelLen: 2048 },
        ],
      });
      const { urls, fetch } = recordingFetch();
      const registry = createProviderRegistry(
        envOf({
          OPENAI_COMPATIBLE_BASE_URL: `${server.url}${suffix}`,
          OPENAI_COMPATIBLE_NAME: "vllm",
        }),
        { fetch },
      );

      const models = await registry.listModels();

      expect(urls).toEqual([`${server.url}/models`]);
      expect(urls.some((url) => url.includes("/v1/v1/"))).toBe(false);
      expect(models).toEqual([
        {
          id: "vllm:qwen3:8b",
          provider: "vllm",
          model: "qwen3:8b",
          label: "qwen3:8b",
          providerLabel: "vllm",
          contextWindow: 32_768,
        },
        {
          id: "vllm:tiny",
          provider: "vllm",
          model: "tiny",
          label: "tiny",
          providerLabel: "vllm",
          contextWindow: 2048,
        },
      ]);
      expect(defaultModelId(models)).toBe("vllm:qwen3:8b");
    },
  );

  it("lists a model whose stated window is odd, with its window unknown", async () => {
    const odd = [0, -1, "32768", 4096.5, null, { tokens: 8192 }];
    const list: typeof fetch = async () =>
      Response.json({
        data: [
          ...odd.map((value, i) => ({ id: `odd-${i}`, max_model_len: value })),
          { id: "fine", max_model_len: 8192 },
        ],
      });
    const registry = createProviderRegistry(
      envOf({ OPENAI_COMPATIBLE_BASE_URL: "http://srv.test/v1", OPENAI_COMPATIBLE_NAME: "vllm" }),
      { fetch: list },
    );

    const models = await registry.listModels();

    expect(ids(models)).toEqual([...odd.map((_, i) => `vllm:odd-${i}`), "vllm:fine"]);
    expect(models.map((m) => m.contextWindow)).toEqual([...odd.map(() => undefined), 8192]);
  });

  it("lists several servers in configuration order", async () => {
    const first = await start({ models: [{ id: "a", maxModelLen: 4096 }] });
    const second = await start({ models: [{ id: "b", maxModelLen: 8192 }] });
    const registry = createProviderRegistry(
      envOf({ OPENAI_COMPATIBLE_BASE_URL: first.url, OPENAI_COMPATIBLE_2_BASE_URL: second.url }),
    );
    expect(ids(await registry.listModels())).toEqual(["local:a", "local2:b"]);
  });

  it("leaves out a server that is down or answers an error, logs a warning, and does not throw", async () => {
    const up = await start({ models: [{ id: "alive", maxModelLen: 4096 }] });
    const down = await start();
    await down.close();
    const warn = vi.spyOn(log, "warn");
    const registry = createProviderRegistry(
      envOf({
        OPENAI_COMPATIBLE_BASE_URL: down.url,
        OPENAI_COMPATIBLE_2_BASE_URL: up.url,
        // A path the fake server does not serve: it answers /models with a 404.
        OPENAI_COMPATIBLE_3_BASE_URL: up.url.replace(/\/v1$/, "/v2"),
      }),
    );

    const models = await registry.listModels();

    expect(ids(models)).toEqual(["local2:alive"]);
    const warned = warn.mock.calls.map(([fields]) => (fields as { provider?: string }).provider);
    expect(warned.sort()).toEqual(["local", "local3"]);
  });

  it("shares one request between concurrent callers and caches the list", async () => {
    const server = await start();
    const { urls, fetch } = recordingFetch();
    let clock = 1_000_000;
    const registry = createProviderRegistry(envOf({ OPENAI_COMPATIBLE_BASE_URL: server.url }), {
      fetch,
      now: () => clock,
    });

    const lists = await Promise.all([
      registry.listModels(),
      registry.listModels(),
      registry.listModels(),
    ]);
    expect(lists.map(ids)).toEqual([
      ["local:fake-model"],
      ["local:fake-model"],
      ["local:fake-model"],
    ]);
    expect(urls).toHaveLength(1);

    clock += MODEL_LIST_TTL_MS - 1;
    await registry.listModels();
    expect(urls).toHaveLength(1);

    clock += 1;
    await registry.listModels();
    expect(urls).toHaveLength(2);

    registry.clearModelCache();
    await registry.listModels();
    expect(urls).toHaveLength(3);
  });

  it("retries a failed list sooner than it refreshes a good one", async () => {
    let calls = 0;
    const flaky: typeof fetch = async () => {
      calls++;
      if (calls === 1) throw new TypeError("fetch failed");
      return Response.json({ object: "list", data: [{ id: "back", max_model_len: 1024 }] });
    };
    let clock = 0;
    const registry = createProviderRegistry(
      envOf({ OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1" }),
      { fetch: flaky, now: () => clock },
    );

    expect(await registry.listModels()).toEqual([]);
    clock += MODEL_LIST_RETRY_MS - 1;
    expect(await registry.listModels()).toEqual([]);
    expect(calls).toBe(1);
    clock += 1;
    expect(ids(await registry.listModels())).toEqual(["local:back"]);
    expect(MODEL_LIST_RETRY_MS).toBeLessThan(MODEL_LIST_TTL_MS);
  });

  it("keeps offering the last list while the provider's list fails, and says when none is known", async () => {
    let up = true;
    const sometimes: typeof fetch = async () => {
      if (!up) throw new TypeError("fetch failed");
      return Response.json({ object: "list", data: [{ id: "steady", max_model_len: 1024 }] });
    };
    let clock = 0;
    const registry = createProviderRegistry(
      envOf({ OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1" }),
      { fetch: sometimes, now: () => clock },
    );
    expect(ids(await registry.listModels())).toEqual(["local:steady"]);
    up = false;
    clock += MODEL_LIST_TTL_MS;
    expect(ids(await registry.listModels())).toEqual(["local:steady"]);
    expect(registry.modelListUnknown("local")).toBe(false);

    const never = createProviderRegistry(
      envOf({ OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1" }),
      { fetch: sometimes, now: () => clock },
    );
    expect(await never.listModels()).toEqual([]);
    expect(never.modelListUnknown("local")).toBe(true);
    expect(never.modelListUnknown("openai")).toBe(false);
  });

  it("lets one caller stop waiting without cancelling the shared request", async () => {
    const server = await start({ models: [{ id: "slow", maxModelLen: 4096 }] });
    const { promise: gate, resolve: release } = Promise.withResolvers<void>();
    const gated: typeof fetch = async (input, init) => {
      await gate;
      return fetch(input, init);
    };
    const registry = createProviderRegistry(envOf({ OPENAI_COMPATIBLE_BASE_URL: server.url }), {
      fetch: gated,
    });

    const caller = new AbortController();
    const impatient = registry.listModels({ signal: caller.signal });
    const patient = registry.listModels();
    caller.abort(new Error("navigated away"));
    release();

    await expect(impatient).rejects.toThrow("navigated away");
    expect(ids(await patient)).toEqual(["local:slow"]);
  });
});

describe("listModels from OpenRouter", () => {
  it("reads context_length and the output limit from its model list", async () => {
    const requests: Array<{ url: string; authorization: string | null }> = [];
    const openrouter: typeof fetch = async (input, init) => {
      requests.push({
        url: String(input),
        authorization: new Headers(init?.headers).get("authorization"),
      });
      return Response.json({
        data: [
          {
            id: "anthropic/claude-sonnet-4.5",
            name: "Anthropic: Claude Sonnet 4.5",
            context_length: 1_000_000,
            top_provider: { max_completion_tokens: 64_000 },
          },
          { id: "some/model:free", name: "Some model", context_length: null },
          {
            id: "odd/model",
            name: "Odd model",
            context_length: "131072",
            top_provider: { max_completion_tokens: -1 },
          },
          { name: "an entry without an id is skipped" },
        ],
      });
    };
    const registry = createProviderRegistry(envOf({ OPENROUTER_API_KEY: "or-key" }), {
      fetch: openrouter,
    });

    const models = await registry.listModels();

    expect(requests).toEqual([
      { url: "https://openrouter.ai/api/v1/models", authorization: "Bearer or-key" },
    ]);
    expect(models).toEqual([
      {
        id: "openrouter:anthropic/claude-sonnet-4.5",
        provider: "openrouter",
        model: "anthropic/claude-sonnet-4.5",
        label: "Anthropic: Claude Sonnet 4.5",
        providerLabel: "OpenRouter",
        contextWindow: 1_000_000,
        maxOutputTokens: 64_000,
      },
      {
        id: "openrouter:some/model:free",
        provider: "openrouter",
        model: "some/model:free",
        label: "Some model",
        providerLabel: "OpenRouter",
      },
      {
        id: "openrouter:odd/model",
        provider: "openrouter",
        model: "odd/model",
        label: "Odd model",
        providerLabel: "OpenRouter",
      },
    ]);
  });
});

describe("streaming through an OpenAI-compatible server", () => {
  it("yields text and usage with input tokens", async () => {
    const server = await start();
    const registry = createProviderRegistry(
      envOf({ OPENAI_COMPATIBLE_BASE_URL: server.url, OPENAI_COMPATIBLE_NAME: "fake" }),
    );

    const result = streamText({
      model: registry.getLanguageModel("fake:fake-model"),
      prompt: "Hello from the registry",
    });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    const usage = await result.usage;

    expect(text).toBe("Fake reply to: Hello from the registry");
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.inputTokens).toBe(server.requests[0]?.promptTokens);
    expect(usage.outputTokens).toBeGreaterThan(0);
    expect(server.requests[0]?.body.stream_options).toEqual({ include_usage: true });
  });
});
