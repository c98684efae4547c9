import { describe, expect, it } from "vitest";
import {
  BUNDLED_CATALOG,
  baseModelId,
  CATALOG_RETRY_MS,
  type CatalogData,
  createCatalog,
  indexCatalog,
  matchCatalog,
} from "@/lib/model-window/catalog";

const bundled = indexCatalog(BUNDLED_CATALOG);
const limitsOf = (provider: string, id: string) =>
  BUNDLED_CATALOG[provider]?.models[id]?.limit ?? {};

/** A models.dev-shaped catalog with one provider. */
function catalogOf(
  provider: string,
  models: Record<string, { context: number; output?: number; released?: string }>,
): CatalogData {
  return {
    [provider]: {
      models: Object.fromEntries(
        Object.entries(models).map(([id, m]) => [
          id,
          { limit: { context: m.context, output: m.output }, release_date: m.released },
        ]),
      ),
    },
  };
}

describe("matchCatalog on the bundled models.dev data", () => {
  it("finds openai gpt-4o with the catalog's own numbers", () => {
    const { context, output } = limitsOf("openai", "gpt-4o");
    expect(context).toBe(128_000);
    expect(matchCatalog(bundled, "openai", "gpt-4o")).toEqual({
      contextWindow: 128_000,
      maxOutputTokens: output,
      matchedId: "openai:gpt-4o",
    });
  });

  it("never lets gpt-4.5-preview borrow gpt-4's window", () => {
    expect(limitsOf("openai", "gpt-4").context).toBe(8192);
    expect(matchCatalog(bundled, "openai", "gpt-4.5-preview")).toBeNull();
  });

  it("matches gpt-4o-mini to its own entry, not gpt-4o's", () => {
    expect(matchCatalog(bundled, "openai", "gpt-4o-mini")?.matchedId).toBe("openai:gpt-4o-mini");
    expect(matchCatalog(bundled, "openai", "gpt-4o-mini-2024-07-18")?.matchedId).toBe(
      "openai:gpt-4o-mini",
    );
  });

  it("matches a dated snapshot to its undated entry", () => {
    expect(matchCatalog(bundled, "openai", "gpt-4o-2024-08-06")?.matchedId).toBe("openai:gpt-4o");
  });

  it("matches an undated or -latest alias to the newest dated snapshot", () => {
    expect(matchCatalog(bundled, "anthropic", "claude-3-5-sonnet-latest")?.matchedId).toBe(
      "anthropic:claude-3-5-sonnet-20241022",
    );
    expect(matchCatalog(bundled, "anthropic", "claude-opus-4-1")).toEqual({
      contextWindow: 200_000,
      maxOutputTokens: limitsOf("anthropic", "claude-opus-4-1-20250805").output,
      matchedId: "anthropic:claude-opus-4-1-20250805",
    });
  });

  it("prefers the exact entry over other snapshots of the same model", () => {
    expect(matchCatalog(bundled, "anthropic", "claude-3-5-sonnet-20240620")?.matchedId).toBe(
      "anthropic:claude-3-5-sonnet-20240620",
    );
  });

  it("searches only the provider's own catalog for a built-in provider", () => {
    // gpt-4o exists under openai, but Anthropic does not serve it.
    expect(matchCatalog(bundled, "anthropic", "gpt-4o")).toBeNull();
  });

  it("falls back to the vendor prefix of an OpenRouter id", () => {
    expect(matchCatalog(bundled, "openrouter", "openai/gpt-4o-mini")?.matchedId).toBe(
      "openrouter:openai/gpt-4o-mini",
    );
    expect(matchCatalog(bundled, "openrouter", "openai/gpt-4o")?.matchedId).toBe("openai:gpt-4o");
  });

  it("searches every provider for a server of unknown make, model makers first", () => {
    expect(matchCatalog(bundled, "local", "gpt-4o")?.matchedId).toBe("openai:gpt-4o");
    expect(matchCatalog(bundled, "local", "GPT-4o")?.matchedId).toBe("openai:gpt-4o");
    expect(matchCatalog(bundled, "local", "no-such-model-anywhere")).toBeNull();
  });
});

describe("boundary-safe normalization", () => {
  it("strips only date and -latest suffixes", () => {
    expect(baseModelId("claude-3-5-sonnet-20241022")).toBe("claude-3-5-sonnet");
    expect(baseModelId("gpt-4o-2024-08-06")).toBe("gpt-4o");
    expect(baseModelId("claude-3-5-sonnet@20241022")).toBe("claude-3-5-sonnet");
    expect(baseModelId("chatgpt-4o-latest")).toBe("chatgpt-4o");
    expect(baseModelId("llama3.2:latest")).toBe("llama3.2");
    for (const id of [
      "gpt-4.5-preview",
      "gpt-4o-mini",
      "deepseek-r1-0528",
      "gemini-2.0-flash-001",
    ]) {
      expect(baseModelId(id)).toBe(id);
    }
    expect(baseModelId("20241022")).toBe("20241022");
  });

  it("matches a prefix only where the rest is a snapshot suffix", () => {
    const index = indexCatalog(
      catalogOf("openai", {
        "gpt-4": { context: 8192, output: 8192 },
        "gpt-4o": { context: 128_000, output: 16_384 },
        "claude-3-5-sonnet": { context: 200_000, output: 8192 },
      }),
    );
    expect(matchCatalog(index, "openai", "gpt-4.5-preview")).toBeNull();
    expect(matchCatalog(index, "openai", "gpt-4-turbo")).toBeNull();
    expect(matchCatalog(index, "openai", "gpt-4o-mini")).toBeNull();
    expect(matchCatalog(index, "openai", "gpt-4-0613")).toBeNull();
    expect(matchCatalog(index, "openai", "claude-3-5-sonnet-20241022")?.matchedId).toBe(
      "openai:claude-3-5-sonnet",
    );
  });

  it("ignores entries without a usable window and reports a missing output limit as null", () => {
    const index = indexCatalog(
      catalogOf("x", { broken: { context: 0 }, plain: { context: 32_768 } }),
    );
    expect(matchCatalog(index, "local", "broken")).toBeNull();
    expect(matchCatalog(index, "local", "plain")).toEqual({
      contextWindow: 32_768,
      maxOutputTokens: null,
      matchedId: "x:plain",
    });
  });
});

describe("live catalog refresh", () => {
  const modelsDev = {
    anthropic: {
      id: "anthropic",
      name: "Anthropic",
      models: {
        "claude-sonnet-9": {
          id: "claude-sonnet-9",
          release_date: "2030-01-01",
          limit: { context: 1_000_000, output: 64_000 },
        },
        "bad-entry": { id: "bad-entry", limit: "unknown" },
      },
    },
  };

  function jsonFetch(body: unknown) {
    const urls: string[] = [];
    const fetch: typeof globalThis.fetch = async (input) => {
      urls.push(String(input));
      return Response.json(body);
    };
    return { urls, fetch };
  }

  it("is off unless configured: a model only models.dev knows stays unknown", async () => {
    const catalog = createCatalog();
    expect(await catalog.lookup("anthropic", "claude-sonnet-9")).toBeNull();
  });

  it("learns new models from models.dev and keeps providers it did not send", async () => {
    const { urls, fetch } = jsonFetch(modelsDev);
    const catalog = createCatalog({ refresh: { fetch, url: "http://models.test/api.json" } });
    expect(await catalog.lookup("anthropic", "claude-sonnet-9")).toEqual({
      contextWindow: 1_000_000,
      maxOutputTokens: 64_000,
      matchedId: "anthropic:claude-sonnet-9",
    });
    expect(urls).toEqual(["http://models.test/api.json"]);
    expect((await catalog.lookup("openai", "gpt-4o"))?.contextWindow).toBe(128_000);
    expect(urls).toHaveLength(1);
  });

  it("falls back to the bundled data, silently and once per retry period, when offline", async () => {
    let clock = 0;
    let calls = 0;
    const fetch: typeof globalThis.fetch = async () => {
      calls++;
      throw new TypeError("fetch failed: getaddrinfo ENOTFOUND models.dev");
    };
    const catalog = createCatalog({ refresh: { fetch }, now: () => clock });
    expect(await catalog.lookup("anthropic", "claude-sonnet-9")).toBeNull();
    expect((await catalog.lookup("openai", "gpt-4o"))?.matchedId).toBe("openai:gpt-4o");
    expect(await catalog.lookup("anthropic", "claude-sonnet-9")).toBeNull();
    expect(calls).toBe(1);
    clock += CATALOG_RETRY_MS;
    await catalog.lookup("anthropic", "claude-sonnet-9");
    expect(calls).toBe(2);
  });

  it("stops waiting for a hung models.dev after its timeout", async () => {
    const fetch: typeof globalThis.fetch = () => new Promise<Response>(() => {});
    const catalog = createCatalog({ refresh: { fetch, timeoutMs: 50 } });
    const started = performance.now();
    expect(await catalog.lookup("anthropic", "claude-sonnet-9")).toBeNull();
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("answers a model the bundled data knows without waiting for the refresh", async () => {
    const fetch: typeof globalThis.fetch = () => new Promise<Response>(() => {});
    const catalog = createCatalog({ refresh: { fetch, timeoutMs: 10_000 } });
    const started = performance.now();
    expect((await catalog.lookup("openai", "gpt-4o"))?.matchedId).toBe("openai:gpt-4o");
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
