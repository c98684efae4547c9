/**
 * Model lists that providers publish over HTTP (OpenAI-compatible `/v1/models`, OpenRouter),
 * fetched with a timeout, cached, and shared between concurrent callers. A provider that is
 * down contributes no models and a warning; listing models never fails because of it.
 */
import { z } from "zod";
import { log } from "@/lib/log";

/** A model list that has not answered by then is treated as down. */
export const MODEL_LIST_TIMEOUT_MS = 5_000;
/** Lists change rarely; a minute keeps the picker fresh without a request per page load. */
export const MODEL_LIST_TTL_MS = 60_000;
/** A failed list is retried sooner, so a server that was just started shows up quickly. */
export const MODEL_LIST_RETRY_MS = 10_000;

/** One model as a provider lists it, before Fold gives it an id. */
export type RemoteModel = {
  model: string;
  label?: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  /** The trained context length, when the list says it apart from the served one (llama.cpp). */
  trainedWindow?: number;
};

export type FetchFunction = typeof globalThis.fetch;

const tokenCount = z.number().int().positive();
/** A limit the list states: an odd value (0, a string, a fraction) is read as not stated. */
const statedLimit = tokenCount.nullish().catch(null);

/**
 * vLLM reports `max_model_len`; llama.cpp's server the trained `meta.n_ctx_train` (the context
 * it runs with is in its `/props`); Ollama and LM Studio list ids only.
 */
const openaiCompatibleEntry = z.object({
  id: z.string().min(1),
  // An odd limit or `meta` leaves the model's window unknown; it never drops the model.
  max_model_len: statedLimit,
  meta: z.object({ n_ctx_train: statedLimit }).nullish().catch(null),
});

const openrouterEntry = z.object({
  id: z.string().min(1),
  name: z.string().min(1).nullish().catch(null),
  context_length: statedLimit,
  top_provider: z.object({ max_completion_tokens: statedLimit }).nullish().catch(null),
});

const listEnvelope = z.object({ data: z.array(z.unknown()) });

/** Parses `{ data: [...] }`, skipping entries that do not fit rather than dropping the list. */
function parseEntries<T>(json: unknown, entry: z.ZodType<T>): T[] {
  const list = listEnvelope.parse(json);
  return list.data.flatMap((item) => {
    const parsed = entry.safeParse(item);
    return parsed.success ? [parsed.data] : [];
  });
}

export function parseOpenAICompatibleModels(json: unknown): RemoteModel[] {
  return parseEntries(json, openaiCompatibleEntry).map((entry) => ({
    model: entry.id,
    contextWindow: entry.max_model_len ?? undefined,
    ...(entry.meta?.n_ctx_train ? { trainedWindow: entry.meta.n_ctx_train } : {}),
  }));
}

export function parseOpenRouterModels(json: unknown): RemoteModel[] {
  return parseEntries(json, openrouterEntry).map((entry) => ({
    model: entry.id,
    label: entry.name ?? undefined,
    contextWindow: entry.context_length ?? undefined,
    maxOutputTokens: entry.top_provider?.max_completion_tokens ?? undefined,
  }));
}

/** `{baseUrl}/models`: the base URL already ends in /v1, and a trailing slash must not double. */
export function modelsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/models`;
}

export type ModelListSource = {
  /** Provider id, for the warning when the list is unavailable. */
  provider: string;
  url: string;
  apiKey?: string;
  parse: (json: unknown) => RemoteModel[];
};

export type ModelListOptions = {
  fetch?: FetchFunction;
  /** Clock for the cache, in ms; injectable for tests. */
  now?: () => number;
};

export type ModelList = {
  /**
   * The cached list, or one shared fetch; a caller's signal only stops that caller waiting.
   * While the provider does not answer, the last list it gave (if any) stands in for it.
   */
  get(signal?: AbortSignal): Promise<RemoteModel[]>;
  /** The last fetch failed and no earlier list stands in: what the provider offers is unknown. */
  unknown(): boolean;
  clear(): void;
};

/** A provider's model list behind a cache with single-flight fetching. */
export function createModelList(
  source: ModelListSource,
  options: ModelListOptions = {},
): ModelList {
  const now = options.now ?? Date.now;
  let cached: { models: RemoteModel[]; expiresAt: number; unknown: boolean } | undefined;
  // The provider's last answer: a moment's outage of its list does not take its models away.
  let lastGood: RemoteModel[] | undefined;
  let inFlight: Promise<RemoteModel[]> | undefined;
  let generation = 0;

  async function refresh(started: number): Promise<RemoteModel[]> {
    let models: RemoteModel[];
    let ttlMs = MODEL_LIST_TTL_MS;
    let unknown = false;
    try {
      models = await fetchModelList(source, options.fetch ?? globalThis.fetch);
      if (started === generation) lastGood = models;
    } catch (error) {
      ttlMs = MODEL_LIST_RETRY_MS;
      models = started === generation ? (lastGood ?? []) : [];
      unknown = models.length === 0;
      log.warn(
        { provider: source.provider, url: source.url, err: error },
        unknown
          ? "model list unavailable; this provider contributes no models"
          : "model list unavailable; its last list stands in",
      );
    }
    // A clear() while this fetch ran must not let its result back into the cache.
    if (started === generation) cached = { models, expiresAt: now() + ttlMs, unknown };
    return models;
  }

  return {
    get(signal) {
      if (cached && cached.expiresAt > now()) return Promise.resolve(cached.models);
      if (!inFlight) {
        const shared = refresh(generation).finally(() => {
          if (inFlight === shared) inFlight = undefined;
        });
        inFlight = shared;
      }
      return abortable(inFlight, signal);
    },
    unknown: () => cached?.unknown === true,
    clear() {
      generation++;
      lastGood = undefined;
      cached = undefined;
      inFlight = undefined;
    },
  };
}

async function fetchModelList(source: ModelListSource, fetch: FetchFunction) {
  const headers: Record<string, string> = { accept: "application/json" };
  if (source.apiKey) headers.authorization = `Bearer ${source.apiKey}`;
  const response = await fetch(source.url, {
    headers,
    signal: AbortSignal.timeout(MODEL_LIST_TIMEOUT_MS),
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`GET ${source.url} answered ${response.status}`);
  }
  return source.parse(await response.json());
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
