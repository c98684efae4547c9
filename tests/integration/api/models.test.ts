import { expect, it, vi } from "vitest";

vi.hoisted(() => {
  // No provider configured, whatever the machine's environment says: the demo model is offered.
  const configured = /^(OPENAI|ANTHROPIC|GOOGLE_GENERATIVE_AI|OPENROUTER)_|^DEMO_MODEL$/;
  for (const name of Object.keys(process.env)) {
    if (configured.test(name)) delete process.env[name];
  }
});

import * as modelsRoute from "@/app/api/models/route";
import type { ModelInfo } from "@/lib/ai/providers";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { anonymous, call } from "../../helpers/http";

describeEachDriver("models API", (use) => {
  it("answers 401 when signed out", async () => {
    const response = await call(use(), modelsRoute.GET, {
      path: "/api/models",
      browser: anonymous(),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: "unauthorized:auth" } });
  });

  it("lists the demo model as the default when no provider is configured", async () => {
    const database = use();
    const { browser } = await register(database, "dora@example.com");
    const response = await call(database, modelsRoute.GET, { path: "/api/models", browser });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { models: ModelInfo[]; defaultModelId: string | null };
    expect(body.models.map((m) => m.label)).toContain("Demo (offline)");
    expect(body.models).toContainEqual(
      expect.objectContaining({ id: "demo:demo", provider: "demo", contextWindow: 8192 }),
    );
    expect(body.defaultModelId).toBe("demo:demo");
  });
});
