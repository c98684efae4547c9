import { describe, expect, it } from "vitest";
import { providersOf } from "@/components/admin/model-access-panel";

const row = (provider: string, model: string, listed: boolean) => ({
  id: `${provider}:${model}`,
  provider,
  model,
  label: model,
  providerLabel: provider,
  listed,
});

describe("the model access panel's providers", () => {
  it("counts and offers only the models a provider lists, not an override left on a model it dropped", () => {
    const providers = providersOf([
      row("openai", "gpt-4o", true),
      row("openai", "gpt-3.5-retired", false),
      row("gone", "old-model", false),
    ]);
    expect(providers.map((p) => [p.id, p.models.map((m) => m.model)])).toEqual([
      ["openai", ["gpt-4o"]],
    ]);
  });
});
