import { afterEach, beforeAll, expect, it, vi } from "vitest";

// This process is one instance on the Redis bus, set before Fold reads its environment.
vi.hoisted(() => {
  process.env.REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
});

import { withDatabase } from "@/lib/db/client";
import { deleteOverride, upsertOverride } from "@/lib/db/queries/model-overrides";
import { user } from "@/lib/db/schema";
import { redisBus } from "@/lib/live/bus";
import {
  type ContextWindow,
  createWindowResolver,
  evictContextWindow,
  resolveContextWindow,
  type WindowResolver,
  windowResolver,
} from "@/lib/model-window/window";
import { describeEachDriver } from "../../helpers/databases";
import { eventually } from "../../helpers/ui-stream";

const ADMIN_ID = "admin-user";
// No keys: gpt-4o's window comes from the bundled catalog (128,000), cached for an hour.
const NO_PROVIDERS = {
  openaiApiKey: undefined,
  anthropicApiKey: undefined,
  googleApiKey: undefined,
  openrouterApiKey: undefined,
  openaiCompatible: [],
};

describeEachDriver("window cache evictions across instances", (use) => {
  /** Another server instance: its own cache and its own Redis connections. */
  async function otherInstance(): Promise<WindowResolver> {
    const resolver = createWindowResolver({
      db: async () => use().db,
      providers: NO_PROVIDERS,
      bus: redisBus(process.env.REDIS_URL ?? ""),
    });
    await resolver.listening();
    return resolver;
  }

  const saveOverride = (contextWindow: number) =>
    upsertOverride(use().db, {
      provider: "openai",
      model: "gpt-4o",
      contextWindow,
      maxOutputTokens: null,
      updatedBy: ADMIN_ID,
    });

  const windowOf = (resolver: WindowResolver) => resolver.resolve("openai", "gpt-4o");
  const shows = (expected: number) => (window: ContextWindow) => window.contextWindow === expected;

  beforeAll(async () => {
    await use()
      .db.insert(user)
      .values({ id: ADMIN_ID, name: "Admin", email: "admin@example.com", role: "admin" });
  });

  afterEach(async () => {
    await deleteOverride(use().db, "openai", "gpt-4o");
    windowResolver().clear();
  });

  it("an override evicted on one instance replaces the window another instance cached", async () => {
    const [here, there] = [await otherInstance(), await otherInstance()];
    expect(await windowOf(there)).toMatchObject({ contextWindow: 128_000, source: "catalog" });

    await saveOverride(30_000);
    here.evict("openai", "gpt-4o");
    // Here at once; there as soon as the eviction crosses Redis, not an hour later.
    expect(await windowOf(here)).toMatchObject({ contextWindow: 30_000, source: "override" });
    await eventually(async () => shows(30_000)(await windowOf(there)), 2_000);
  });

  it("evictContextWindow in this process reaches another instance's cache", async () => {
    const database = use();
    const there = await otherInstance();
    expect(await windowOf(there)).toMatchObject({ contextWindow: 128_000 });

    await saveOverride(40_000);
    withDatabase(database, () => evictContextWindow("openai", "gpt-4o"));
    await eventually(async () => shows(40_000)(await windowOf(there)), 2_000);
  });

  it("an eviction another instance announces reaches this process's cache", async () => {
    const database = use();
    const there = await otherInstance();
    await windowResolver().listening();
    const resolveHere = () =>
      withDatabase(database, () => resolveContextWindow("openai", "gpt-4o"));
    expect(await resolveHere()).toMatchObject({ contextWindow: 128_000 });

    await saveOverride(50_000);
    there.evict("openai", "gpt-4o");
    await eventually(async () => shows(50_000)(await resolveHere()), 2_000);
  });

  it("with its bus down, an instance still evicts its own cache at once", async () => {
    const alone = createWindowResolver({
      db: async () => use().db,
      providers: NO_PROVIDERS,
      bus: redisBus("redis://127.0.0.1:1"),
    });
    await alone.listening();
    expect(await windowOf(alone)).toMatchObject({ contextWindow: 128_000 });

    await saveOverride(60_000);
    alone.evict("openai", "gpt-4o");
    expect(await windowOf(alone)).toMatchObject({ contextWindow: 60_000, source: "override" });
  });
});
