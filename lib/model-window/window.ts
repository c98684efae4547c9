/**
 * A model's context window (DESIGN §6), resolved by a chain where the first hit wins:
 * admin override → the provider's own API → the bundled catalog → a conservative default.
 * Results are cached per provider+model and resolved once for concurrent callers.
 */
import type { FetchFunction } from "@/lib/ai/remote-models";
import { type Db, getDb } from "@/lib/db/client";
import { getOverride } from "@/lib/db/queries/model-overrides";
import { env } from "@/lib/env";
import { log, metric } from "@/lib/log";
import { type CatalogRefreshOptions, createCatalog } from "./catalog";
import { withDeadline } from "./window-deadline";
import { createProviderLookups, type ProvidersConfig } from "./window-providers";

/** Windows change with deployments, not turns; an admin edit evicts at once anyway. */
export const CONTEXT_WINDOW_TTL_MS = 60 * 60_000;
/** A guessed window is retried soon, so a provider that was down gets its real one. */
export const DEFAULT_WINDOW_TTL_MS = 60_000;
/** A provider API that has not answered by then is skipped for the catalog. */
export const PROVIDER_WINDOW_TIMEOUT_MS = 5_000;
/** Small enough that any current model holds it; compaction starts early rather than late. */
export const DEFAULT_CONTEXT_WINDOW = 8192;

export type WindowSource = "override" | "provider" | "catalog" | "default";

export type ContextWindow = {
  contextWindow: number;
  /** The model's output ceiling, or null when nothing says. */
  maxOutputTokens: number | null;
  /** Where `contextWindow` came from; a `default` window shows a neutral ring. */
  source: WindowSource;
  /** The catalog entry behind a `catalog` window, e.g. `openai:gpt-4o`. */
  matchedId?: string;
};

export type WindowResolverOptions = {
  db: () => Promise<Db>;
  providers: ProvidersConfig;
  /** For provider APIs; the global fetch by default. */
  fetch?: FetchFunction;
  /** Clock for the cache, in ms. */
  now?: () => number;
  /** Deadline of the provider step; PROVIDER_WINDOW_TIMEOUT_MS by default. */
  timeoutMs?: number;
  /** Live catalog refresh from models.dev; off unless given. */
  catalogRefresh?: CatalogRefreshOptions | false;
};

export type WindowResolver = {
  /** `db` is where admin overrides are read; the process's database when not given. */
  resolve(provider: string, model: string, db?: Db): Promise<ContextWindow>;
  /** Forgets one model's window, e.g. after an admin edits its override. */
  evict(provider: string, model: string): void;
  /** Forgets every window and model list. */
  clear(): void;
};

type Cached = { window: ContextWindow; expiresAt: number };
type Flight = { id: number; promise: Promise<ContextWindow> };

export function createWindowResolver(options: WindowResolverOptions): WindowResolver {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? PROVIDER_WINDOW_TIMEOUT_MS;
  const lookups = createProviderLookups(options.providers, {
    fetch: options.fetch ?? globalThis.fetch,
    now,
    timeoutMs,
  });
  const catalog = createCatalog({ refresh: options.catalogRefresh, now });
  const cache = new Map<string, Cached>();
  const inFlight = new Map<string, Flight>();
  let flights = 0;

  /** Steps 2–4: provider, catalog, default. */
  async function fromSources(provider: string, model: string): Promise<ContextWindow> {
    const lookup = lookups.get(provider);
    if (lookup) {
      try {
        const result = await withDeadline(timeoutMs, (signal) => lookup(model, signal));
        if (result.timedOut) {
          log.warn({ provider, model, timeoutMs }, "context window lookup timed out");
        } else if (result.value) {
          return { ...result.value, source: "provider" };
        }
      } catch (error) {
        log.warn({ provider, model, err: error }, "context window lookup failed");
      }
    }
    const match = await catalog.lookup(provider, model);
    if (match) return { ...match, source: "catalog" };
    return { contextWindow: DEFAULT_CONTEXT_WINDOW, maxOutputTokens: null, source: "default" };
  }

  /** The whole chain. An override may set one number; the other comes from the sources. */
  async function resolveFresh(provider: string, model: string, db?: Db): Promise<ContextWindow> {
    const override = await getOverride(db ?? (await options.db()), provider, model);
    const contextWindow = override?.contextWindow ?? null;
    const maxOutputTokens = override?.maxOutputTokens ?? null;
    if (contextWindow !== null && maxOutputTokens !== null) {
      return { contextWindow, maxOutputTokens, source: "override" };
    }
    const rest = await fromSources(provider, model);
    if (contextWindow !== null) {
      return { contextWindow, maxOutputTokens: rest.maxOutputTokens, source: "override" };
    }
    const window = maxOutputTokens !== null ? { ...rest, maxOutputTokens } : rest;
    if (window.source === "default") metric("context_window.default", { provider, model });
    return window;
  }

  return {
    resolve(provider, model, db) {
      const key = cacheKey(provider, model);
      const hit = cache.get(key);
      if (hit && hit.expiresAt > now()) return Promise.resolve({ ...hit.window });
      let flight = inFlight.get(key);
      if (!flight) {
        const id = ++flights;
        const promise = resolveFresh(provider, model, db)
          .then((window) => {
            // An eviction while this ran dropped the flight: its result must not be cached.
            if (inFlight.get(key)?.id === id) {
              const ttlMs =
                window.source === "default" ? DEFAULT_WINDOW_TTL_MS : CONTEXT_WINDOW_TTL_MS;
              cache.set(key, { window, expiresAt: now() + ttlMs });
            }
            return window;
          })
          .finally(() => {
            if (inFlight.get(key)?.id === id) inFlight.delete(key);
          });
        flight = { id, promise };
        inFlight.set(key, flight);
      }
      return flight.promise.then((window) => ({ ...window }));
    },

    evict(provider, model) {
      const key = cacheKey(provider, model);
      cache.delete(key);
      inFlight.delete(key);
    },

    clear() {
      cache.clear();
      inFlight.clear();
      lookups.clear();
    },
  };
}

function cacheKey(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}

let defaultResolver: WindowResolver | undefined;

/** The resolver for this process's environment and database, created on first use. */
export function windowResolver(): WindowResolver {
  defaultResolver ??= createWindowResolver({
    db: getDb,
    providers: env().providers,
    // Tests never reach for models.dev; a server tries it and falls back when offline.
    catalogRefresh: env().nodeEnv === "test" ? false : {},
  });
  return defaultResolver;
}

export function resolveContextWindow(
  provider: string,
  model: string,
  db?: Db,
): Promise<ContextWindow> {
  return windowResolver().resolve(provider, model, db);
}

/** Call after writing or deleting a `model_override` row, so the next turn sees it. */
export function evictContextWindow(provider: string, model: string): void {
  windowResolver().evict(provider, model);
}
