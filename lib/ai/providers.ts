/**
 * The provider registry (DESIGN §2, §13): which providers the environment configures, the
 * language model behind a `provider:model` id, and the models a user can pick.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogle } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { type Env, env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { LruMap } from "@/lib/lru-map";
import {
  createDemoModel,
  DEMO_CONTEXT_WINDOW,
  DEMO_MAX_OUTPUT_TOKENS,
  DEMO_MODEL_ID,
  DEMO_PROVIDER,
} from "./demo-model";
import { type ModelInfo, parseModelId } from "./model-id";
import {
  createModelList,
  type FetchFunction,
  type ModelListOptions,
  modelsUrl,
  parseOpenAICompatibleModels,
  parseOpenRouterModels,
  type RemoteModel,
} from "./remote-models";

export { type ModelInfo, parseModelId } from "./model-id";

const OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1";
/** Model objects kept per registry: a provider builds its response schemas in each one. */
const MODEL_CACHE_MAX_ENTRIES = 64;
export const DEMO_MODEL_LABEL = "Demo (offline)";

/**
 * Suggested chat models of the providers whose lists Fold does not fetch. Any other model
 * id of these providers still works when typed; windows come from the resolution chain.
 */
const STATIC_MODELS = {
  openai: [
    { model: "gpt-4.1", label: "GPT-4.1" },
    { model: "gpt-4.1-mini", label: "GPT-4.1 mini" },
    { model: "gpt-4o", label: "GPT-4o" },
    { model: "gpt-4o-mini", label: "GPT-4o mini" },
    { model: "o4-mini", label: "o4-mini" },
  ],
  anthropic: [
    { model: "claude-sonnet-4-5", label: "Claude Sonnet 4.5" },
    { model: "claude-haiku-4-5", label: "Claude Haiku 4.5" },
    { model: "claude-opus-4-1", label: "Claude Opus 4.1" },
  ],
  google: [
    { model: "gemini-2.5-pro", label: "Gemini 2.5 Pro" },
    { model: "gemini-2.5-flash", label: "Gemini 2.5 Flash" },
  ],
} as const satisfies Record<string, readonly RemoteModel[]>;

export type ProviderKind =
  | "openai"
  | "anthropic"
  | "google"
  | "openrouter"
  | "openai-compatible"
  | "demo";

export type ProviderInfo = { id: string; label: string; kind: ProviderKind };

export type ProviderRegistry = {
  /** Configured providers in the order their models are listed (demo last). */
  readonly providers: readonly ProviderInfo[];
  /** The model for `provider:model`; AppError `bad_request:model` when it is not available. */
  getLanguageModel(modelId: string): LanguageModelV4;
  listModels(options?: { signal?: AbortSignal }): Promise<ModelInfo[]>;
  /**
   * One provider's models (none for a provider not configured): what checks one model needs,
   * without waiting on other providers (a server on the LAN that does not answer).
   */
  listModelsOf(provider: string, options?: { signal?: AbortSignal }): Promise<ModelInfo[]>;
  /**
   * Whether `provider`'s model list is unknown right now: its last fetch failed and no earlier
   * list stands in (so a model missing from it may exist).
   */
  modelListUnknown(provider: string): boolean;
  /** `defaultModelId` of the current list; AppError `unavailable:model` when it is empty. */
  resolveDefaultModelId(options?: { signal?: AbortSignal }): Promise<string>;
  /** Forgets the cached remote model lists. */
  clearModelCache(): void;
};

export type ProviderRegistryOptions = {
  /** Used for model lists and model calls alike; the global fetch by default. */
  fetch?: FetchFunction;
  /** Clock for the model-list cache, in ms. */
  now?: () => number;
};

type Provider = ProviderInfo & {
  /** The model, or undefined when this provider cannot serve that name. */
  languageModel(model: string): LanguageModelV4 | undefined;
  listModels(signal?: AbortSignal): Promise<readonly RemoteModel[]>;
  listUnknown?(): boolean;
  clear?(): void;
};

/** The first model of the first configured provider; the demo model only when it is alone. */
export function defaultModelId(models: readonly ModelInfo[]): string | null {
  return (models.find((m) => m.provider !== DEMO_PROVIDER) ?? models[0])?.id ?? null;
}

export function createProviderRegistry(
  config: Pick<Env, "providers" | "demoModel">,
  options: ProviderRegistryOptions = {},
): ProviderRegistry {
  const providers = configuredProviders(config, options);
  const byId = new Map(providers.map((provider) => [provider.id, provider]));
  // A model object holds no per-call state; building one costs a turn more than the rest
  // of its provider bookkeeping, so each id's is built once.
  const models = new LruMap<string, LanguageModelV4>(MODEL_CACHE_MAX_ENTRIES);

  async function listAll({ signal }: { signal?: AbortSignal } = {}): Promise<ModelInfo[]> {
    const lists = await Promise.all(providers.map((provider) => provider.listModels(signal)));
    return providers.flatMap((provider, i) =>
      (lists[i] ?? []).map((entry) => modelInfo(provider, entry)),
    );
  }

  return {
    providers: providers.map(({ id, label, kind }) => ({ id, label, kind })),

    getLanguageModel(modelId) {
      const cached = models.get(modelId);
      if (cached) return cached;
      const parsed = parseModelId(modelId);
      if (!parsed) {
        throw new AppError(
          "bad_request:model",
          `Unknown model "${modelId}": expected provider:model.`,
        );
      }
      const provider = byId.get(parsed.provider);
      if (!provider) {
        throw new AppError(
          "bad_request:model",
          `Unknown model "${modelId}": provider "${parsed.provider}" is not configured.`,
        );
      }
      const model = provider.languageModel(parsed.model);
      if (!model) {
        throw new AppError(
          "bad_request:model",
          `Unknown model "${modelId}": ${provider.label} has no model "${parsed.model}".`,
        );
      }
      models.set(modelId, model);
      return model;
    },

    listModels: listAll,

    async listModelsOf(id, { signal } = {}) {
      const provider = byId.get(id);
      if (!provider) return [];
      return (await provider.listModels(signal)).map((entry) => modelInfo(provider, entry));
    },

    modelListUnknown: (provider) => byId.get(provider)?.listUnknown?.() === true,

    async resolveDefaultModelId(options) {
      const id = defaultModelId(await listAll(options));
      if (!id) {
        throw new AppError(
          "unavailable:model",
          "No model is available: configure a provider or set DEMO_MODEL to auto or always.",
        );
      }
      return id;
    },

    clearModelCache() {
      for (const provider of providers) provider.clear?.();
    },
  };
}

function modelInfo(provider: Provider, entry: RemoteModel): ModelInfo {
  const info: ModelInfo = {
    id: `${provider.id}:${entry.model}`,
    provider: provider.id,
    model: entry.model,
    label: entry.label ?? entry.model,
    providerLabel: provider.label,
  };
  if (entry.contextWindow !== undefined) info.contextWindow = entry.contextWindow;
  if (entry.maxOutputTokens !== undefined) info.maxOutputTokens = entry.maxOutputTokens;
  return info;
}

/** Every provider the environment enables, in listing order: hosted, self-hosted, demo. */
function configuredProviders(
  config: Pick<Env, "providers" | "demoModel">,
  options: ProviderRegistryOptions,
): Provider[] {
  const { fetch } = options;
  const listOptions: ModelListOptions = { fetch, now: options.now };
  const keys = config.providers;
  const providers: Provider[] = [];

  if (keys.openaiApiKey) {
    const openai = createOpenAI({ apiKey: keys.openaiApiKey, fetch });
    providers.push(staticProvider("openai", "OpenAI", (model) => openai(model)));
  }
  if (keys.anthropicApiKey) {
    const anthropic = createAnthropic({ apiKey: keys.anthropicApiKey, fetch });
    providers.push(staticProvider("anthropic", "Anthropic", (model) => anthropic(model)));
  }
  if (keys.googleApiKey) {
    const google = createGoogle({ apiKey: keys.googleApiKey, fetch });
    providers.push(staticProvider("google", "Google", (model) => google(model)));
  }
  if (keys.openrouterApiKey) {
    providers.push(
      remoteProvider({
        id: "openrouter",
        label: "OpenRouter",
        kind: "openrouter",
        baseUrl: OPENROUTER_BASE_URL,
        apiKey: keys.openrouterApiKey,
        parse: parseOpenRouterModels,
        listOptions,
      }),
    );
  }
  for (const server of keys.openaiCompatible) {
    providers.push(
      remoteProvider({
        id: server.name,
        label: server.name,
        kind: "openai-compatible",
        baseUrl: server.baseUrl,
        apiKey: server.apiKey,
        parse: parseOpenAICompatibleModels,
        listOptions,
      }),
    );
  }

  const demo =
    config.demoModel === "always" || (config.demoModel === "auto" && providers.length === 0);
  if (demo) providers.push(demoProvider());
  return providers;
}

function staticProvider(
  id: keyof typeof STATIC_MODELS,
  label: string,
  languageModel: (model: string) => LanguageModelV4,
): Provider {
  const models: readonly RemoteModel[] = STATIC_MODELS[id];
  return { id, label, kind: id, languageModel, listModels: async () => models };
}

/** An OpenAI-compatible endpoint whose models come from its own `/models` list. */
function remoteProvider(input: {
  id: string;
  label: string;
  kind: "openrouter" | "openai-compatible";
  baseUrl: string;
  apiKey: string | undefined;
  parse: (json: unknown) => RemoteModel[];
  listOptions: ModelListOptions;
}): Provider {
  const provider = createOpenAICompatible({
    name: input.id,
    baseURL: input.baseUrl,
    apiKey: input.apiKey,
    // Without it streamed replies carry no token counts, and Fold needs them (DESIGN §5).
    includeUsage: true,
    fetch: input.listOptions.fetch,
  });
  const list = createModelList(
    { provider: input.id, url: modelsUrl(input.baseUrl), apiKey: input.apiKey, parse: input.parse },
    input.listOptions,
  );
  return {
    id: input.id,
    label: input.label,
    kind: input.kind,
    languageModel: (model) => provider(model),
    listModels: (signal) => list.get(signal),
    listUnknown: () => list.unknown(),
    clear: () => list.clear(),
  };
}

function demoProvider(): Provider {
  const models: readonly RemoteModel[] = [
    {
      model: DEMO_MODEL_ID,
      label: DEMO_MODEL_LABEL,
      contextWindow: DEMO_CONTEXT_WINDOW,
      maxOutputTokens: DEMO_MAX_OUTPUT_TOKENS,
    },
  ];
  return {
    id: DEMO_PROVIDER,
    label: "Demo",
    kind: "demo",
    languageModel: (model) => (model === DEMO_MODEL_ID ? createDemoModel() : undefined),
    listModels: async () => models,
  };
}

let defaultRegistry: ProviderRegistry | undefined;

/** The registry for this process's environment, created on first use. */
export function providerRegistry(): ProviderRegistry {
  defaultRegistry ??= createProviderRegistry(env());
  return defaultRegistry;
}

export function getLanguageModel(modelId: string): LanguageModelV4 {
  return providerRegistry().getLanguageModel(modelId);
}

export function listModels(options?: { signal?: AbortSignal }): Promise<ModelInfo[]> {
  return providerRegistry().listModels(options);
}

/** The process registry's `listModelsOf`. */
export function listModelsOf(
  provider: string,
  options?: { signal?: AbortSignal },
): Promise<ModelInfo[]> {
  return providerRegistry().listModelsOf(provider, options);
}

/** Whether `provider`'s model list is unknown right now (see ProviderRegistry). */
export function modelListUnknown(provider: string): boolean {
  return providerRegistry().modelListUnknown(provider);
}

/** The model a chat without one uses; for callers that have no model list at hand. */
export function resolveDefaultModelId(options?: { signal?: AbortSignal }): Promise<string> {
  return providerRegistry().resolveDefaultModelId(options);
}
