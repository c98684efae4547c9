/**
 * A model's context window (DESIGN §6), resolved by a chain where the first hit wins:
 * admin override → a window a server revealed by cutting a prompt (issue 15) → the provider's
 * own API → the bundled catalog → a conservative default.
 * Results are cached per provider+model and resolved once for concurrent callers; an eviction
 * reaches every instance's cache through the live bus.
 */
import type { FetchFunction } from "@/lib/ai/remote-models";
import { type Db, getDb } from "@/lib/db/client";
import { getOverride } from "@/lib/db/queries/model-overrides";
import {
  getObservedWindow,
  type ObservedWindow,
  recordObservedWindow,
} from "@/lib/db/queries/observed-windows";
import { env } from "@/lib/env";
import { type LiveBus, liveBus } from "@/lib/live/bus";
import { shareEvictions } from "@/lib/live/window-evictions";
import { log, metric } from "@/lib/log";
import { LruMap } from "@/lib/lru-map";
import { type CatalogRefreshOptions, createCatalog } from "./catalog";
import { withDeadline } from "./window-deadline";
import { describeChain } from "./window-label";
import { createProviderLookups, type ProvidersConfig } from "./window-providers";
import type { ChainWindow, ContextWindow, ServerKind } from "./window-types";

export type {
  ChainWindow,
  ContextWindow,
  ServerKind,
  WindowBasis,
  WindowDetail,
  WindowSource,
} from "./window-types";

/** Windows change with deployments, not turns; an admin edit evicts at once anyway. */
export const CONTEXT_WINDOW_TTL_MS = 60 * 60_000;
/**
 * A guessed window is retried soon, so a provider that was down gets its real one, and a
 * server's assumed default gives way to the context it loads the model with.
 */
export const DEFAULT_WINDOW_TTL_MS = 60_000;
/**
 * A window a local server loaded its model with changes when the model is reloaded (Fold's own
 * advice when a chat does not fit: reload it with a larger context), with no deployment: it is
 * asked again within minutes. Its probes are a few requests to a server on the same network.
 */
export const LOCAL_WINDOW_TTL_MS = 2 * 60_000;
/** Servers that load a model at a context length chosen at load time. */
const LOADING_SERVERS: ReadonlySet<ServerKind> = new Set(["ollama", "llama.cpp", "lm-studio"]);
/** Windows kept at once: far above the models any install uses; model ids are user input. */
export const WINDOW_CACHE_MAX_ENTRIES = 1_000;
/** A provider API that has not answered by then is skipped for the catalog. */
export const PROVIDER_WINDOW_TIMEOUT_MS = 5_000;
/** Small enough that any current model holds it; compaction starts early rather than late. */
export const DEFAULT_CONTEXT_WINDOW = 8192;

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
  /** Carries evictions to and from the other instances; without it they stay in this one. */
  bus?: LiveBus;
};

export type WindowResolver = {
  /** `db` is where admin overrides and observations are read; the process's database when not given. */
  resolve(provider: string, model: string, db?: Db): Promise<ContextWindow>;
  /**
   * For Admin → Models: the resolved window, what the chain says without an override or an
   * observation, and the model's observation (whether or not it still applies).
   */
  inspect(provider: string, model: string, db?: Db): Promise<WindowInspection>;
  /**
   * Forgets one model's window, e.g. after an admin edits its override: here at once, and on
   * every instance that hears the bus.
   */
  evict(provider: string, model: string): void;
  /** Forgets every window and model list (here only). */
  clear(): void;
  /** Settles once other instances' evictions are heard, or hearing them failed (logged). */
  listening(): Promise<void>;
};

export type WindowInspection = {
  window: ContextWindow;
  chain: ChainWindow;
  observed: ObservedWindow | null;
};

/** A resolved window, and what the chain said under its override (null: it was not asked). */
type Cached = { window: ContextWindow; chain: ChainWindow | null; expiresAt: number };
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
  const cache = new LruMap<string, Cached>(WINDOW_CACHE_MAX_ENTRIES);
  const inFlight = new Map<string, Flight>();
  let flights = 0;
  const evictions = options.bus ? shareEvictions(options.bus, forget, now) : undefined;
  void evictions?.listen();

  function forget(provider: string, model: string): void {
    const key = cacheKey(provider, model);
    cache.delete(key);
    inFlight.delete(key);
    // The provider's list is read again too: a window evicted because the server changed
    // (restarted with a smaller context) must not come back from a list fetched before.
    lookups.forgetList(provider);
  }

  /**
   * Steps 3–5: provider, catalog, default. `stopgap` when the provider's own lookup failed or
   * timed out: what stands in for its answer is kept only as long as a guess.
   */
  async function fromSources(
    provider: string,
    model: string,
  ): Promise<{ chain: ChainWindow; stopgap: boolean }> {
    const lookup = lookups.get(provider);
    let stopgap = false;
    if (lookup) {
      try {
        const result = await withDeadline(timeoutMs, (signal) => lookup(model, signal));
        if (result.timedOut) {
          stopgap = true;
          log.warn({ provider, model, timeoutMs }, "context window lookup timed out");
        } else if (result.value) {
          return { chain: { ...result.value, source: "provider" }, stopgap };
        }
      } catch (error) {
        stopgap = true;
        log.warn({ provider, model, err: error }, "context window lookup failed");
      }
    }
    const match = await catalog.lookup(provider, model);
    if (match) return { chain: { ...match, source: "catalog" }, stopgap };
    return {
      chain: { contextWindow: DEFAULT_CONTEXT_WINDOW, maxOutputTokens: null, source: "default" },
      stopgap,
    };
  }

  /**
   * The whole chain, and how long to keep its answer. An override may set one number; the
   * other comes from the rest.
   */
  async function resolveFresh(
    provider: string,
    model: string,
    db?: Db,
  ): Promise<{ window: ContextWindow; chain: ChainWindow | null; ttlMs: number }> {
    const database = db ?? (await options.db());
    const [override, observed] = await Promise.all([
      getOverride(database, provider, model),
      getObservedWindow(database, provider, model),
    ]);
    const contextWindow = override?.contextWindow ?? null;
    const maxOutputTokens = override?.maxOutputTokens ?? null;
    if (contextWindow !== null && maxOutputTokens !== null) {
      // Both set: the chain is not asked, so the model's own output limit is not known.
      const window: ContextWindow = {
        contextWindow,
        maxOutputTokens,
        source: "override",
        outputOverride: { modelLimit: null },
      };
      return { window, chain: null, ttlMs: ttlOf(window, false) };
    }
    const { chain, stopgap } = await fromSources(provider, model);
    const window = withOverride(override ?? null, withObservation(chain, observed));
    if (window.source === "default") metric("context_window.default", { provider, model });
    return { window, chain, ttlMs: ttlOf(window, stopgap) };
  }

  return {
    resolve(provider, model, db) {
      void evictions?.listen();
      const key = cacheKey(provider, model);
      const hit = cache.get(key);
      if (hit && hit.expiresAt > now()) return Promise.resolve({ ...hit.window });
      let flight = inFlight.get(key);
      if (!flight) {
        const id = ++flights;
        const promise = resolveFresh(provider, model, db)
          .then(({ window, chain, ttlMs }) => {
            // An eviction while this ran dropped the flight: its result must not be cached.
            if (inFlight.get(key)?.id === id) {
              cache.set(key, { window, chain, expiresAt: now() + ttlMs });
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

    async inspect(provider, model, db) {
      const database = db ?? (await options.db());
      const [window, observed, override] = await Promise.all([
        this.resolve(provider, model, database),
        getObservedWindow(database, provider, model),
        getOverride(database, provider, model),
      ]);
      // An override hides what the chain says (either number of it); an observation carries
      // it along.
      const chain = !override
        ? (window.chain ?? (window as ChainWindow))
        : (cache.get(cacheKey(provider, model))?.chain ??
          (await fromSources(provider, model)).chain);
      return { window, chain: { ...chain }, observed };
    },

    evict(provider, model) {
      forget(provider, model);
      evictions?.announce(provider, model);
    },

    clear() {
      cache.clear();
      inFlight.clear();
      lookups.clear();
    },

    listening: () => evictions?.listen() ?? Promise.resolve(),
  };
}

/**
 * An override's numbers over what the rest of the chain (and an observation) gives: each number
 * it sets replaces the rest's; a window it sets makes the source `override`.
 */
export function withOverride(
  override: { contextWindow: number | null; maxOutputTokens: number | null } | null,
  rest: ContextWindow,
): ContextWindow {
  const contextWindow = override?.contextWindow ?? null;
  const maxOutputTokens = override?.maxOutputTokens ?? rest.maxOutputTokens;
  const outputOverride =
    override?.maxOutputTokens != null
      ? { outputOverride: { modelLimit: rest.maxOutputTokens } }
      : {};
  if (contextWindow !== null) {
    return { contextWindow, maxOutputTokens, source: "override", ...outputOverride };
  }
  return maxOutputTokens === rest.maxOutputTokens && !override?.maxOutputTokens
    ? rest
    : { ...rest, maxOutputTokens, ...outputOverride };
}

/**
 * The observation stands in for the chain's window while the chain still gives the window Fold
 * believed when it saw the cut: a server that now reports a different context (reloaded with a
 * larger one, say) has made it stale.
 */
export function withObservation(
  chain: ChainWindow,
  observed: Pick<ObservedWindow, "contextWindow" | "chainWindow"> | null,
): ContextWindow {
  if (
    !observed ||
    observed.chainWindow !== chain.contextWindow ||
    observed.contextWindow >= chain.contextWindow
  ) {
    return chain;
  }
  return {
    contextWindow: observed.contextWindow,
    maxOutputTokens: chain.maxOutputTokens,
    source: "observed",
    chain,
  };
}

/**
 * Guesses are retried within a minute — a default, a server's assumed context, a model the
 * server has not loaded yet (it may load at far less than its trained length), or whatever
 * stood in for a server that did not answer; what a local server loaded its model with within
 * minutes (a reload changes it); what a provider or an admin said holds for an hour.
 */
function ttlOf(window: ContextWindow, stopgap: boolean): number {
  const guessed =
    stopgap ||
    window.source === "default" ||
    window.detail?.basis === "assumed" ||
    window.detail?.notLoaded === true;
  if (guessed) return DEFAULT_WINDOW_TTL_MS;
  const server = window.detail?.server;
  return server && LOADING_SERVERS.has(server) ? LOCAL_WINDOW_TTL_MS : CONTEXT_WINDOW_TTL_MS;
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
    bus: liveBus(),
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

export function inspectContextWindow(
  provider: string,
  model: string,
  db?: Db,
): Promise<WindowInspection> {
  return windowResolver().inspect(provider, model, db);
}

/**
 * Call after writing or deleting a `model_override` or `model_observed_window` row, so the next
 * turn sees it, on whichever instance it runs.
 */
export function evictContextWindow(provider: string, model: string): void {
  windowResolver().evict(provider, model);
}

/**
 * Keeps a window a server showed it runs the model with (a prompt it cut silently, or a window
 * its refusal stated) when it is smaller than the one the chain looked up (`chain`): recorded as
 * an observed window beside what the chain believed, and the cached window dropped, so the next
 * turn budgets with it. True when it was kept.
 */
export async function keepObservedWindow(
  db: Db,
  model: { provider: string; model: string },
  chain: ChainWindow,
  observed: { contextWindow: number; sentTokens: number; chatId: string },
): Promise<boolean> {
  if (observed.contextWindow >= chain.contextWindow) return false;
  await recordObservedWindow(db, {
    ...model,
    ...observed,
    chainWindow: chain.contextWindow,
    chainSource: describeChain(chain),
  });
  evictContextWindow(model.provider, model.model);
  return true;
}
