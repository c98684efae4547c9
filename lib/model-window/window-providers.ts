/**
 * Step 2 of the window chain (DESIGN §6): what a provider's own API says about a model.
 * OpenRouter and OpenAI-compatible servers publish windows in their model lists (cached and
 * shared by `remote-models.ts`); Google answers per model. A local server (Ollama, llama.cpp,
 * LM Studio) is asked for the context it runs the model with (`window-servers.ts`).
 * OpenAI and Anthropic publish nothing usable, so their models go to the catalog.
 */
import { z } from "zod";
import { DEMO_CONTEXT_WINDOW, DEMO_MAX_OUTPUT_TOKENS, DEMO_MODEL_ID } from "@/lib/ai/demo-model";
import {
  createModelList,
  type FetchFunction,
  type ModelList,
  modelsUrl,
  parseOpenAICompatibleModels,
  parseOpenRouterModels,
  type RemoteModel,
} from "@/lib/ai/remote-models";
import type { Env } from "@/lib/env";
import { LruMap } from "@/lib/lru-map";
import { localWindow, pickReport } from "./window-local";
import { llamaCppReport, lmStudioReport, ollamaReport } from "./window-servers";
import type { ProviderWindow, ServerKind } from "./window-types";

export type { ProviderWindow } from "./window-types";

export const OPENROUTER_MODELS_URL = "https://openrouter.ai/api/v1/models";
export const GOOGLE_MODELS_URL = "https://generativelanguage.googleapis.com/v1beta/models";

export type ProvidersConfig = Env["providers"];

/** Asks one provider about one model; null when it does not say. Honours the signal. */
export type ProviderLookup = (model: string, signal: AbortSignal) => Promise<ProviderWindow | null>;

export type ProviderLookups = {
  /** The lookup of a provider id, or undefined when its API publishes no windows. */
  get(provider: string): ProviderLookup | undefined;
  /** Forgets the cached model lists. */
  clear(): void;
  /** Forgets one provider's cached model list: its next lookup asks the provider again. */
  forgetList(provider: string): void;
};

export type ProviderLookupOptions = {
  fetch: FetchFunction;
  now: () => number;
  /** Caps each request; the caller also stops waiting at its own deadline. */
  timeoutMs: number;
};

const tokenCount = z.number().int().positive();

/** Models per local server whose last loaded context is kept (model ids come from users). */
const LAST_LOADED_MAX_MODELS = 1_000;

const googleModel = z.object({
  inputTokenLimit: tokenCount.nullish(),
  outputTokenLimit: tokenCount.nullish(),
});

/**
 * The server's root: the base URL without trailing slashes or a trailing `/v1`, so that
 * `http://host/v1/` and `http://host` both become `http://host` (never `/v1/v1/models`).
 */
export function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/**
 * A server's model list, where the model picker reads it (`{baseUrl}/models`, a gateway's
 * `/openai/models` too); a base URL that is the server's root alone has its API under /v1
 * (lib/env.ts gives it that path).
 */
function serverModelsUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, "");
  return new URL(trimmed).pathname === "/" ? `${trimmed}/v1/models` : modelsUrl(trimmed);
}

export function createProviderLookups(
  config: ProvidersConfig,
  options: ProviderLookupOptions,
): ProviderLookups {
  const { fetch, timeoutMs } = options;
  // Model lists are fetched once for many callers, so they carry their own timeout.
  const listOptions = { fetch: timeoutFetch(fetch, timeoutMs), now: options.now };
  const lookups = new Map<string, ProviderLookup>();
  const lists = new Map<string, ModelList>();

  lookups.set("demo", async (model) =>
    model === DEMO_MODEL_ID
      ? {
          contextWindow: DEMO_CONTEXT_WINDOW,
          maxOutputTokens: DEMO_MAX_OUTPUT_TOKENS,
          detail: { server: "demo", basis: "listed" },
        }
      : null,
  );

  if (config.googleApiKey) {
    const apiKey = config.googleApiKey;
    lookups.set("google", (model, signal) => googleWindow(fetch, apiKey, model, signal));
  }

  if (config.openrouterApiKey) {
    const list = createModelList(
      {
        provider: "openrouter",
        url: OPENROUTER_MODELS_URL,
        apiKey: config.openrouterApiKey,
        parse: parseOpenRouterModels,
      },
      listOptions,
    );
    lists.set("openrouter", list);
    lookups.set("openrouter", async (model, signal) =>
      orUnanswered(listedWindow(await list.get(signal), model, "openrouter"), list),
    );
  }

  for (const server of config.openaiCompatible) {
    const root = serverRoot(server.baseUrl);
    // The context each model was last seen loaded at: an idle server unloads a model (Ollama
    // after 5 minutes) and loads it the same way on its next request.
    const lastLoaded = new LruMap<string, number>(LAST_LOADED_MAX_MODELS);
    const list = createModelList(
      {
        provider: server.name,
        url: serverModelsUrl(server.baseUrl),
        apiKey: server.apiKey,
        parse: parseOpenAICompatibleModels,
      },
      listOptions,
    );
    lists.set(server.name, list);
    lookups.set(server.name, async (model, signal) => {
      const models = await list.get(signal);
      // vLLM lists the window it serves (max_model_len); the others tell it in their own APIs.
      const listed = listedWindow(models, model, "vllm");
      if (listed) return listed;
      signal.throwIfAborted();
      const target = { fetch, root, apiKey: server.apiKey, model, signal };
      const trained = models.find((m) => m.model === model)?.trainedWindow ?? null;
      const reports = await Promise.all([
        ollamaReport(target),
        lmStudioReport(target),
        llamaCppReport(target, trained),
      ]);
      const report = pickReport(reports);
      if (!report) return orUnanswered(null, list);
      if (report.loaded !== null) lastLoaded.set(model, report.loaded);
      const remembered = { ...report, lastLoaded: lastLoaded.get(model) ?? null };
      return localWindow(remembered, server.assumedContext);
    });
  }

  return {
    get: (provider) => lookups.get(provider),
    clear() {
      for (const list of lists.values()) list.clear();
    },
    forgetList(provider) {
      lists.get(provider)?.clear();
    },
  };
}

/**
 * Nothing found, while the model list did not answer (a 503 while a server restarts): that is
 * no answer, not "the server does not say" — thrown, so what stands in is kept only as a guess.
 */
function orUnanswered(window: ProviderWindow | null, list: ModelList): ProviderWindow | null {
  if (window === null && list.unknown()) throw new Error("the model list did not answer");
  return window;
}

function listedWindow(
  models: readonly RemoteModel[],
  model: string,
  server: ServerKind,
): ProviderWindow | null {
  const entry = models.find((m) => m.model === model);
  if (!entry?.contextWindow) return null;
  return {
    contextWindow: entry.contextWindow,
    maxOutputTokens: entry.maxOutputTokens ?? null,
    detail: { server, basis: "listed" },
  };
}

/** `GET …/v1beta/models/{model}`: `inputTokenLimit` is the window, `outputTokenLimit` the output. */
async function googleWindow(
  fetch: FetchFunction,
  apiKey: string,
  model: string,
  signal: AbortSignal,
): Promise<ProviderWindow | null> {
  const id = model.replace(/^models\//, "");
  const url = `${GOOGLE_MODELS_URL}/${encodeURIComponent(id)}`;
  // The key goes in a header rather than `?key=`, so it never lands in a logged URL.
  const response = await fetch(url, {
    headers: { accept: "application/json", "x-goog-api-key": apiKey },
    signal,
  });
  if (response.status === 404) {
    await response.body?.cancel();
    return null;
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`GET ${url} answered ${response.status}`);
  }
  const parsed = googleModel.parse(await response.json());
  if (!parsed.inputTokenLimit) return null;
  return {
    contextWindow: parsed.inputTokenLimit,
    maxOutputTokens: parsed.outputTokenLimit ?? null,
    detail: { server: "google", basis: "listed" },
  };
}

/** The fetch with `timeoutMs` added to whatever signal the caller passes. */
function timeoutFetch(fetch: FetchFunction, timeoutMs: number): FetchFunction {
  return (input, init) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    return fetch(input, { ...init, signal });
  };
}
