import { expect, it, vi } from "vitest";

vi.hoisted(() => {
  // Only the demo model, whatever the machine's environment says; no admin by email.
  const configured =
    /^(OPENAI|ANTHROPIC|GOOGLE_GENERATIVE_AI|OPENROUTER)_|^DEMO_MODEL$|^ADMIN_EMAILS$/;
  for (const name of Object.keys(process.env)) {
    if (configured.test(name)) delete process.env[name];
  }
  process.env.DEMO_MODEL = "always";
});

import * as adminModels from "@/app/api/admin/models/route";
import type { AdminModel } from "@/lib/admin/models";
import type { Database } from "@/lib/db/client";
import { listOverrides } from "@/lib/db/queries/model-overrides";
import { register, signIn } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { anonymous, type Browser, call } from "../../helpers/http";

const PATH = "/api/admin/models";
const DEMO = { provider: "demo", model: "demo" };

function list(database: Database, browser: Browser) {
  return call(database, adminModels.GET, { path: PATH, browser });
}

function put(database: Database, browser: Browser, body: unknown) {
  return call(database, adminModels.PUT, { path: PATH, method: "PUT", body, browser });
}

async function demoRow(database: Database, browser: Browser): Promise<AdminModel> {
  const response = await list(database, browser);
  expect(response.status).toBe(200);
  const { models } = (await response.json()) as { models: AdminModel[] };
  const row = models.find((m) => m.id === "demo:demo");
  if (!row) throw new Error(`demo:demo is not listed: ${models.map((m) => m.id).join(", ")}`);
  return row;
}

describeEachDriver("admin models API", (use) => {
  it("answers 401 to a stranger and 403 to a non-admin, for GET and PUT", async () => {
    const database = use();
    await register(database, "ada@example.com"); // first user: admin
    const { browser: bob } = await register(database, "bob@example.com");
    const body = { ...DEMO, contextWindow: 16_000, maxOutputTokens: null };

    for (const browser of [anonymous(), bob]) {
      const expected = browser === bob ? 403 : 401;
      const code = browser === bob ? "forbidden:admin" : "unauthorized:auth";
      const got = await list(database, browser);
      expect(got.status).toBe(expected);
      expect(await got.json()).toMatchObject({ error: { code } });
      const wrote = await put(database, browser, body);
      expect(wrote.status).toBe(expected);
      expect(await wrote.json()).toMatchObject({ error: { code } });
    }
    expect(await listOverrides(database.db)).toEqual([]);
  });

  it("lists the demo model with its window, source and cold-start calibration", async () => {
    const database = use();
    const { browser } = await signIn(database, "ada@example.com");
    const row = await demoRow(database, browser);
    expect(row).toMatchObject({
      label: "Demo (offline)",
      providerLabel: "Demo",
      listed: true,
      contextWindow: 8192,
      maxOutputTokens: 1024,
      source: "provider",
      override: null,
      calibration: { ratio: 1.15, samples: 0 },
    });
  });

  it("refuses invalid overrides with a clear 400 and writes nothing", async () => {
    const database = use();
    const { browser } = await signIn(database, "ada@example.com");
    const cases: Array<[string, unknown, RegExp]> = [
      ["negative", { ...DEMO, contextWindow: -5, maxOutputTokens: null }, /contextWindow: .*zero/],
      ["zero", { ...DEMO, contextWindow: 0, maxOutputTokens: null }, /contextWindow: .*zero/],
      [
        "non-integer",
        { ...DEMO, contextWindow: 1000.5, maxOutputTokens: null },
        /contextWindow: .*whole number/,
      ],
      [
        "too large",
        { ...DEMO, contextWindow: 10_000_001, maxOutputTokens: null },
        /contextWindow: .*10,000,000/,
      ],
      [
        "a string",
        { ...DEMO, contextWindow: "16000", maxOutputTokens: null },
        /contextWindow: must be a number or null/,
      ],
      ["missing field", { ...DEMO, contextWindow: 16_000 }, /maxOutputTokens: .*required/],
      [
        "output equal to the window",
        { ...DEMO, contextWindow: 16_000, maxOutputTokens: 16_000 },
        /maxOutputTokens: .*below the context window/,
      ],
      [
        "output alone above the resolved window",
        { ...DEMO, contextWindow: null, maxOutputTokens: 8192 },
        /maxOutputTokens: .*below the model's context window \(8192/,
      ],
      [
        "unknown provider",
        { provider: "nowhere", model: "x", contextWindow: 16_000, maxOutputTokens: null },
        /Provider "nowhere" is not configured/,
      ],
      [
        "a blank model",
        { provider: "demo", model: "   ", contextWindow: 16_000, maxOutputTokens: null },
        /model: is required/,
      ],
      [
        "a model padded with a space (it would match no model)",
        { provider: "demo", model: "demo ", contextWindow: 16_000, maxOutputTokens: null },
        /model: must not start or end with a space/,
      ],
      [
        "extra keys",
        { ...DEMO, contextWindow: 16_000, maxOutputTokens: null, source: "override" },
        /Unrecognized key: "source"/,
      ],
    ];
    for (const [name, body, message] of cases) {
      const response = await put(database, browser, body);
      expect(response.status, name).toBe(400);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.message, name).toMatch(message);
    }

    const malformed = await call(database, adminModels.PUT, {
      path: PATH,
      method: "PUT",
      rawBody: '{"provider": "demo", ',
      browser,
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({
      error: { code: "bad_request:body", message: "The request body is not valid JSON." },
    });

    expect(await listOverrides(database.db)).toEqual([]);
    expect(await demoRow(database, browser)).toMatchObject({
      contextWindow: 8192,
      source: "provider",
      override: null,
    });
  });

  it("a saved override is what the next request resolves; clearing it returns to the chain", async () => {
    const database = use();
    const { browser } = await signIn(database, "ada@example.com");
    // Resolve once first, so a stale cache would show if the write did not evict it.
    const before = await demoRow(database, browser);

    const saved = await put(database, browser, {
      ...DEMO,
      contextWindow: 16_000,
      maxOutputTokens: 2000,
    });
    expect(saved.status).toBe(200);
    const expected = {
      id: "demo:demo",
      contextWindow: 16_000,
      maxOutputTokens: 2000,
      source: "override",
      override: { contextWindow: 16_000, maxOutputTokens: 2000 },
    };
    expect(((await saved.json()) as { model: AdminModel }).model).toMatchObject(expected);
    expect(await demoRow(database, browser)).toMatchObject(expected);

    // The output ceiling alone: the window comes from the chain again, below the new ceiling.
    const outputOnly = await put(database, browser, {
      ...DEMO,
      contextWindow: null,
      maxOutputTokens: 4000,
    });
    expect(outputOnly.status).toBe(200);
    expect(await demoRow(database, browser)).toMatchObject({
      contextWindow: 8192,
      maxOutputTokens: 4000,
      source: before.source,
      override: { contextWindow: null, maxOutputTokens: 4000 },
    });

    const cleared = await put(database, browser, {
      ...DEMO,
      contextWindow: null,
      maxOutputTokens: null,
    });
    expect(cleared.status).toBe(200);
    expect(await listOverrides(database.db)).toEqual([]);
    const after = await demoRow(database, browser);
    expect(after).toMatchObject({
      contextWindow: before.contextWindow,
      maxOutputTokens: before.maxOutputTokens,
      source: before.source,
      override: null,
    });
  });

  it("refuses a window with no room for the reply's reserve and a short conversation, saying why", async () => {
    const database = use();
    const { browser } = await signIn(database, "ada@example.com");
    const cases: Array<[string, unknown, RegExp]> = [
      // The window a user saw blamed on their message: 10 tokens.
      [
        "ten tokens",
        { ...DEMO, contextWindow: 10, maxOutputTokens: null },
        /^contextWindow: is too small: after keeping 2 tokens free for the reply, 8 are left for the conversation, and a chat needs at least 1,024/,
      ],
      [
        "a reply reserve that takes half",
        { ...DEMO, contextWindow: 2000, maxOutputTokens: 1500 },
        /^contextWindow: is too small: after keeping 1,000 tokens free for the reply, 1,000 are left/,
      ],
      // Valid by the form's numbers, but the provider's own 1,024-token output limit then
      // takes half of a 1,500-token window: only the resolved window can tell.
      [
        "too small with the chain's output limit",
        { ...DEMO, contextWindow: 1500, maxOutputTokens: null },
        /^contextWindow: the resulting window is too small: after keeping 750 tokens free for the reply, 750 are left/,
      ],
    ];
    for (const [name, body, message] of cases) {
      const response = await put(database, browser, body);
      expect(response.status, name).toBe(400);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code, name).toBe("bad_request:body");
      expect(error.message, name).toMatch(message);
    }
    expect(await listOverrides(database.db)).toEqual([]);
    expect(await demoRow(database, browser)).toMatchObject({ contextWindow: 8192, override: null });

    // The smallest window that leaves the room is accepted.
    const smallest = await put(database, browser, {
      ...DEMO,
      contextWindow: 2048,
      maxOutputTokens: 1024,
    });
    expect(smallest.status).toBe(200);
    expect(await demoRow(database, browser)).toMatchObject({ contextWindow: 2048 });
    await put(database, browser, { ...DEMO, contextWindow: null, maxOutputTokens: null });
  });

  it("refuses an output ceiling alone when the window it would fall back to is smaller", async () => {
    const database = use();
    const { browser } = await signIn(database, "ada@example.com");
    const wide = { ...DEMO, contextWindow: 16_000, maxOutputTokens: 10_000 };
    expect((await put(database, browser, wide)).status).toBe(200);

    // Dropping the window override leaves 8192 from the provider: 10,000 no longer fits.
    const refused = await put(database, browser, { ...wide, contextWindow: null });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: { message: expect.stringMatching(/below the model's context window \(8192/) },
    });
    expect(await demoRow(database, browser)).toMatchObject({
      contextWindow: 16_000,
      maxOutputTokens: 10_000,
      source: "override",
      override: { contextWindow: 16_000, maxOutputTokens: 10_000 },
    });

    expect(
      (await put(database, browser, { ...DEMO, contextWindow: null, maxOutputTokens: null }))
        .status,
    ).toBe(200);
  });

  it("refuses a save over an override another admin saved since the editor began (409), losing neither", async () => {
    const database = use();
    const { browser: first } = await signIn(database, "ada@example.com");
    const { browser: second } = await signIn(database, "ada@example.com");
    // Both editors show the model without an override; the first saves a window.
    const began = (await demoRow(database, second)).override?.updatedAt ?? null;
    expect(began).toBeNull();
    const saved = await put(database, first, {
      ...DEMO,
      contextWindow: 16_000,
      maxOutputTokens: null,
      from: null,
    });
    expect(saved.status).toBe(200);

    // The second sets only the output limit, its window field still empty as it began: refused,
    // rather than clearing the window the first just saved.
    const late = await put(database, second, {
      ...DEMO,
      contextWindow: null,
      maxOutputTokens: 512,
      from: began,
    });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({
      error: { code: "conflict:override", message: expect.stringMatching(/Another admin/) },
    });
    const now = await demoRow(database, second);
    expect(now.override).toMatchObject({ contextWindow: 16_000, maxOutputTokens: null });
    // Nor may it clear it.
    const cleared = await put(database, second, {
      ...DEMO,
      contextWindow: null,
      maxOutputTokens: null,
      from: began,
    });
    expect(cleared.status).toBe(409);

    // From the override it shows now, its save goes through.
    const again = await put(database, second, {
      ...DEMO,
      contextWindow: 16_000,
      maxOutputTokens: 512,
      from: now.override?.updatedAt,
    });
    expect(again.status).toBe(200);
    expect((await demoRow(database, first)).override).toMatchObject({
      contextWindow: 16_000,
      maxOutputTokens: 512,
    });
    const last = (await demoRow(database, first)).override?.updatedAt;
    expect(
      (
        await put(database, first, {
          ...DEMO,
          contextWindow: null,
          maxOutputTokens: null,
          from: last,
        })
      ).status,
    ).toBe(200);
    expect(await listOverrides(database.db)).toEqual([]);
  });
});
