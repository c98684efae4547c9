import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEMO_CONTEXT_WINDOW, DEMO_MAX_OUTPUT_TOKENS } from "@/lib/ai/demo-model";
import {
  createProviderLookups,
  GOOGLE_MODELS_URL,
  OPENROUTER_MODELS_URL,
  type ProvidersConfig,
  serverRoot,
} from "@/lib/model-window/window-providers";
import { type FakeOpenAI, startFakeOpenAI } from "../../fixtures/fake-openai/server.ts";

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
type Stub = { url: string; hits: string[]; close: () => Promise<void> };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function startFake(options: Parameters<typeof startFakeOpenAI>[0]): Promise<FakeOpenAI> {
  const server = await startFakeOpenAI(options);
  cleanups.push(() => server.close());
  return server;
}

/** A tiny local HTTP server, recording `METHOD path` of each request. */
async function startStub(handler: Handler): Promise<Stub> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      hits.push(`${req.method} ${req.url}`);
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  cleanups.push(close);
  return { url: `http://127.0.0.1:${port}`, hits, close };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** An Ollama server: ids only in /v1/models, the window in /api/show. */
function ollama(show: Record<string, unknown>): Handler {
  return (req, body, res) => {
    if (req.method === "GET" && req.url === "/v1/models") {
      sendJson(res, 200, { object: "list", data: [{ id: "llama3.2:latest", object: "model" }] });
    } else if (req.method === "POST" && req.url === "/api/show") {
      const { model } = JSON.parse(body) as { model: string };
      if (model === "llama3.2:latest") sendJson(res, 200, show);
      else sendJson(res, 404, { error: `model '${model}' not found` });
    } else {
      sendJson(res, 404, { error: "not found" });
    }
  };
}

const LLAMA_SHOW = {
  parameters: 'stop "<|eot_id|>"',
  model_info: { "general.architecture": "llama", "llama.context_length": 131_072 },
};

function config(patch: Partial<ProvidersConfig> = {}): ProvidersConfig {
  return {
    openaiApiKey: undefined,
    anthropicApiKey: undefined,
    googleApiKey: undefined,
    openrouterApiKey: undefined,
    openaiCompatible: [],
    ...patch,
  };
}

function recordingFetch(respond?: (url: string, init?: RequestInit) => Response) {
  const calls: { url: string; init?: RequestInit }[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const url = String(input);
    calls.push({ url, init });
    return respond ? respond(url, init) : globalThis.fetch(input, init);
  };
  return { calls, fetch };
}

const signal = () => AbortSignal.timeout(5_000);
const lookupsFor = (
  providers: ProvidersConfig,
  fetch: typeof globalThis.fetch = globalThis.fetch,
) => createProviderLookups(providers, { fetch, now: Date.now, timeoutMs: 5_000 });

describe("serverRoot", () => {
  it.each([
    ["http://host:8000/v1", "http://host:8000"],
    ["http://host:8000/v1/", "http://host:8000"],
    ["http://host:8000/", "http://host:8000"],
    ["http://host:8000", "http://host:8000"],
    ["https://proxy.example/openai/v1", "https://proxy.example/openai"],
    ["http://host/v10", "http://host/v10"],
  ])("%s → %s", (baseUrl, root) => {
    expect(serverRoot(baseUrl)).toBe(root);
  });
});

describe("OpenAI-compatible servers", () => {
  it("read max_model_len from /v1/models of the fake server", async () => {
    const fake = await startFake({ models: [{ id: "m", maxModelLen: 32_768 }] });
    const lookups = lookupsFor(
      config({ openaiCompatible: [{ name: "local", baseUrl: fake.url }] }),
    );
    expect(await lookups.get("local")?.("m", signal())).toEqual({
      contextWindow: 32_768,
      maxOutputTokens: null,
      detail: { server: "vllm", basis: "listed" },
    });
  });

  it.each(["/v1", "/v1/", "", "/"])(
    "hit /v1/models exactly once for a base URL ending in %j, never /v1/v1/models",
    async (suffix) => {
      const fake = await startFake({ models: [{ id: "m", maxModelLen: 32_768 }] });
      const root = fake.url.replace(/\/v1$/, "");
      const { calls, fetch } = recordingFetch();
      const lookups = lookupsFor(
        config({ openaiCompatible: [{ name: "local", baseUrl: `${root}${suffix}` }] }),
        fetch,
      );
      expect((await lookups.get("local")?.("m", signal()))?.contextWindow).toBe(32_768);
      expect(calls.map((c) => c.url)).toEqual([`${root}/v1/models`]);
    },
  );

  it("read the list a gateway serves under its own path (/openai/models), where the model picker reads it", async () => {
    const stub = await startStub((req, _body, res) => {
      if (req.method === "GET" && req.url === "/openai/models") {
        sendJson(res, 200, { object: "list", data: [{ id: "qwen", max_model_len: 8_192 }] });
      } else sendJson(res, 404, { error: "not found" });
    });
    const lookups = lookupsFor(
      config({ openaiCompatible: [{ name: "gw", baseUrl: `${stub.url}/openai` }] }),
    );
    expect(await lookups.get("gw")?.("qwen", signal())).toEqual({
      contextWindow: 8_192,
      maxOutputTokens: null,
      detail: { server: "vllm", basis: "listed" },
    });
    expect(stub.hits[0]).toBe("GET /openai/models");
  });

  it("ask Ollama's /api/show on the root when /v1/models has no max_model_len", async () => {
    const stub = await startStub(ollama(LLAMA_SHOW));
    const lookups = lookupsFor(
      config({ openaiCompatible: [{ name: "ollama", baseUrl: `${stub.url}/v1/` }] }),
    );
    // This server cannot say what it runs the model with (no /api/ps): the trained length.
    expect(await lookups.get("ollama")?.("llama3.2:latest", signal())).toEqual({
      contextWindow: 131_072,
      maxOutputTokens: null,
      detail: { server: "ollama", basis: "trained" },
      trainedWindow: 131_072,
    });
    expect(stub.hits.slice(0, 1)).toEqual(["GET /v1/models"]);
    expect(stub.hits).toContain("POST /api/show");
    expect(stub.hits).toContain("GET /api/ps");
  });

  it("take Ollama's num_ctx when the Modelfile sets a smaller one", async () => {
    const stub = await startStub(
      ollama({
        ...LLAMA_SHOW,
        parameters: 'num_ctx                        16384\nstop "<|eot_id|>"',
      }),
    );
    const lookups = lookupsFor(
      config({ openaiCompatible: [{ name: "ollama", baseUrl: stub.url }] }),
    );
    expect((await lookups.get("ollama")?.("llama3.2:latest", signal()))?.contextWindow).toBe(
      16_384,
    );
  });

  it("say nothing for a model neither list nor /api/show knows", async () => {
    const stub = await startStub(ollama(LLAMA_SHOW));
    const lookups = lookupsFor(
      config({ openaiCompatible: [{ name: "ollama", baseUrl: stub.url }] }),
    );
    expect(await lookups.get("ollama")?.("mistral:7b", signal())).toBeNull();
  });

  it("fail, rather than say nothing, when the server is busy or failing (a 503 while it loads, a proxy's 502)", async () => {
    for (const status of [502, 503]) {
      // Ollama behind a proxy whose /api/ps fails for a moment: not "this server cannot tell".
      const stub = await startStub((req, body, res) => {
        if (req.url === "/api/ps") sendJson(res, status, { error: "upstream unavailable" });
        else ollama(LLAMA_SHOW)(req, body, res);
      });
      const lookups = lookupsFor(
        config({ openaiCompatible: [{ name: "ollama", baseUrl: stub.url }] }),
      );
      await expect(lookups.get("ollama")?.("llama3.2:latest", signal())).rejects.toThrow(
        `${status}`,
      );
    }
  });

  it("say nothing when the server is not Ollama and lists no window", async () => {
    const stub = await startStub((req, _body, res) => {
      if (req.url === "/v1/models") sendJson(res, 200, { data: [{ id: "qwen" }] });
      else sendJson(res, 404, { error: "not found" });
    });
    const lookups = lookupsFor(config({ openaiCompatible: [{ name: "lms", baseUrl: stub.url }] }));
    expect(await lookups.get("lms")?.("qwen", signal())).toBeNull();
    expect(stub.hits.slice(0, 1)).toEqual(["GET /v1/models"]);
    expect([...stub.hits].sort()).toEqual(
      ["GET /api/v0/models/qwen", "GET /props", "GET /v1/models", "POST /api/show"].sort(),
    );
  });
});

describe("OpenRouter", () => {
  it("reads context_length and top_provider.max_completion_tokens from /api/v1/models", async () => {
    const { calls, fetch } = recordingFetch(() =>
      Response.json({
        data: [
          {
            id: "anthropic/claude-sonnet-4",
            context_length: 200_000,
            top_provider: { max_completion_tokens: 64_000 },
          },
          { id: "meta-llama/llama-3.1-8b-instruct", context_length: 131_072, top_provider: {} },
        ],
      }),
    );
    const lookups = lookupsFor(config({ openrouterApiKey: "or-key" }), fetch);
    const lookup = lookups.get("openrouter");
    const detail = { server: "openrouter", basis: "listed" };
    expect(await lookup?.("anthropic/claude-sonnet-4", signal())).toEqual({
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      detail,
    });
    expect(await lookup?.("meta-llama/llama-3.1-8b-instruct", signal())).toEqual({
      contextWindow: 131_072,
      maxOutputTokens: null,
      detail,
    });
    expect(await lookup?.("unknown/model", signal())).toBeNull();
    expect(calls.map((c) => c.url)).toEqual([OPENROUTER_MODELS_URL]);
    expect(new Headers(calls[0]?.init?.headers).get("authorization")).toBe("Bearer or-key");
  });

  it("is not asked when no key is configured", () => {
    expect(lookupsFor(config()).get("openrouter")).toBeUndefined();
  });
});

describe("Google", () => {
  it("reads inputTokenLimit and outputTokenLimit of the model", async () => {
    const { calls, fetch } = recordingFetch((url) =>
      url.endsWith("/gemini-2.5-pro")
        ? Response.json({
            name: "models/gemini-2.5-pro",
            inputTokenLimit: 1_048_576,
            outputTokenLimit: 65_536,
          })
        : Response.json({ error: { code: 404 } }, { status: 404 }),
    );
    const lookup = lookupsFor(config({ googleApiKey: "g-key" }), fetch).get("google");
    expect(await lookup?.("gemini-2.5-pro", signal())).toEqual({
      contextWindow: 1_048_576,
      maxOutputTokens: 65_536,
      detail: { server: "google", basis: "listed" },
    });
    expect(await lookup?.("models/gemini-9", signal())).toBeNull();
    expect(calls.map((c) => c.url)).toEqual([
      `${GOOGLE_MODELS_URL}/gemini-2.5-pro`,
      `${GOOGLE_MODELS_URL}/gemini-9`,
    ]);
    expect(new Headers(calls[0]?.init?.headers).get("x-goog-api-key")).toBe("g-key");
  });

  it("fails loudly on a server error, so the resolver logs it and moves on", async () => {
    const { fetch } = recordingFetch(() => new Response("oops", { status: 500 }));
    const lookup = lookupsFor(config({ googleApiKey: "g-key" }), fetch).get("google");
    await expect(lookup?.("gemini-2.5-pro", signal())).rejects.toThrow(/answered 500/);
  });
});

describe("providers without a window API", () => {
  it("answer the demo model with its own constants", async () => {
    const lookup = lookupsFor(config()).get("demo");
    expect(await lookup?.("demo", signal())).toEqual({
      contextWindow: DEMO_CONTEXT_WINDOW,
      maxOutputTokens: DEMO_MAX_OUTPUT_TOKENS,
      detail: { server: "demo", basis: "listed" },
    });
    expect(DEMO_CONTEXT_WINDOW).toBe(8192);
    expect(DEMO_MAX_OUTPUT_TOKENS).toBe(1024);
  });

  it("leave OpenAI and Anthropic to the catalog", () => {
    const lookups = lookupsFor(config({ openaiApiKey: "k", anthropicApiKey: "k" }));
    expect(lookups.get("openai")).toBeUndefined();
    expect(lookups.get("anthropic")).toBeUndefined();
  });
});
