import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { withDatabase } from "@/lib/db/client";
import {
  deleteOverride,
  getOverride,
  listOverrides,
  upsertOverride,
} from "@/lib/db/queries/model-overrides";
import { modelOverride, user } from "@/lib/db/schema";
import {
  createWindowResolver,
  evictContextWindow,
  resolveContextWindow,
  type WindowResolver,
} from "@/lib/model-window/window";
import { type FakeOpenAI, startFakeOpenAI } from "../../fixtures/fake-openai/server.ts";
import { describeEachDriver } from "../../helpers/databases";

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI({ models: [{ id: "m", maxModelLen: 32_768 }] });
});
afterAll(() => fake.close());

const ADMIN_ID = "admin-user";

describeEachDriver("context window overrides", (use) => {
  let resolver: WindowResolver;

  beforeAll(async () => {
    await use()
      .db.insert(user)
      .values({ id: ADMIN_ID, name: "Admin", email: "admin@example.com", role: "admin" });
  });

  beforeEach(async () => {
    await use().db.delete(modelOverride);
    resolver = createWindowResolver({
      db: async () => use().db,
      providers: {
        openaiApiKey: undefined,
        anthropicApiKey: undefined,
        googleApiKey: undefined,
        openrouterApiKey: undefined,
        openaiCompatible: [{ name: "local", baseUrl: fake.url }],
      },
    });
  });

  it("reads, lists, replaces and deletes override rows", async () => {
    const { db } = use();
    expect(await getOverride(db, "local", "m")).toBeNull();

    const first = await upsertOverride(db, {
      provider: "local",
      model: "m",
      contextWindow: 16_000,
      maxOutputTokens: null,
      updatedBy: ADMIN_ID,
    });
    expect(first).toMatchObject({
      provider: "local",
      model: "m",
      contextWindow: 16_000,
      maxOutputTokens: null,
      updatedBy: ADMIN_ID,
    });

    const second = await upsertOverride(db, {
      provider: "local",
      model: "m",
      contextWindow: null,
      maxOutputTokens: 2048,
      updatedBy: null,
    });
    expect(second).toMatchObject({ contextWindow: null, maxOutputTokens: 2048, updatedBy: null });
    expect(second.updatedAt.getTime()).toBeGreaterThanOrEqual(first.updatedAt.getTime());
    expect(await getOverride(db, "local", "m")).toEqual(second);

    await upsertOverride(db, {
      provider: "anthropic",
      model: "claude-x",
      contextWindow: 100_000,
      maxOutputTokens: 4096,
      updatedBy: ADMIN_ID,
    });
    expect((await listOverrides(db)).map((row) => `${row.provider}:${row.model}`)).toEqual([
      "anthropic:claude-x",
      "local:m",
    ]);

    expect(await deleteOverride(db, "local", "m")).toBe(true);
    expect(await deleteOverride(db, "local", "m")).toBe(false);
    expect(await getOverride(db, "local", "m")).toBeNull();
    expect(await listOverrides(db)).toHaveLength(1);
  });

  it("an override row drives the chain, and its edits apply after eviction", async () => {
    const { db } = use();
    expect(await resolver.resolve("local", "m")).toEqual({
      contextWindow: 32_768,
      maxOutputTokens: null,
      source: "provider",
      detail: { server: "vllm", basis: "listed" },
    });

    await upsertOverride(db, {
      provider: "local",
      model: "m",
      contextWindow: 12_000,
      maxOutputTokens: 1500,
      updatedBy: ADMIN_ID,
    });
    resolver.evict("local", "m");
    expect(await resolver.resolve("local", "m")).toEqual({
      contextWindow: 12_000,
      maxOutputTokens: 1500,
      source: "override",
      outputOverride: { modelLimit: null },
    });

    await upsertOverride(db, {
      provider: "local",
      model: "m",
      contextWindow: null,
      maxOutputTokens: 1500,
      updatedBy: ADMIN_ID,
    });
    resolver.evict("local", "m");
    expect(await resolver.resolve("local", "m")).toEqual({
      contextWindow: 32_768,
      maxOutputTokens: 1500,
      source: "provider",
      detail: { server: "vllm", basis: "listed" },
      outputOverride: { modelLimit: null },
    });

    await deleteOverride(db, "local", "m");
    resolver.evict("local", "m");
    expect((await resolver.resolve("local", "m")).source).toBe("provider");
  });

  it("an override of a catalog model replaces the catalog's window", async () => {
    await upsertOverride(use().db, {
      provider: "openai",
      model: "gpt-4o",
      contextWindow: 30_000,
      maxOutputTokens: null,
      updatedBy: ADMIN_ID,
    });
    const window = await resolver.resolve("openai", "gpt-4o");
    expect(window).toMatchObject({ contextWindow: 30_000, source: "override" });
    expect(window.maxOutputTokens).toBeGreaterThan(0);
  });

  it("the process-wide resolveContextWindow reads the request's database", async () => {
    const database = use();
    await withDatabase(database, async () => {
      evictContextWindow("openai", "gpt-4o");
      expect(await resolveContextWindow("openai", "gpt-4o")).toMatchObject({
        contextWindow: 128_000,
        source: "catalog",
      });
      await upsertOverride(database.db, {
        provider: "openai",
        model: "gpt-4o",
        contextWindow: 50_000,
        maxOutputTokens: 5_000,
        updatedBy: ADMIN_ID,
      });
      evictContextWindow("openai", "gpt-4o");
      expect(await resolveContextWindow("openai", "gpt-4o")).toEqual({
        contextWindow: 50_000,
        maxOutputTokens: 5_000,
        source: "override",
        outputOverride: { modelLimit: null },
      });
      evictContextWindow("openai", "gpt-4o");
    });
  });
});
