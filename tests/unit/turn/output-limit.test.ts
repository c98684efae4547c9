import { describe, expect, it } from "vitest";
import type { ContextWindow } from "@/lib/model-window/window-types";
import { outputLimitToSend } from "@/lib/turn/model-call";

const model = (modelId: string, window: ContextWindow, outputReserve: number) => ({
  modelId,
  window,
  budget: { outputReserve } as never,
});

describe("the output limit a turn asks the provider for", () => {
  it("is the room Fold kept for the reply, for a built-in provider's model with a known limit", () => {
    const window: ContextWindow = {
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      source: "catalog",
    };
    expect(outputLimitToSend(model("anthropic:claude-x", window, 64_000))).toBe(64_000);
  });

  it("is not sent when no limit is known", () => {
    const window: ContextWindow = {
      contextWindow: 32_768,
      maxOutputTokens: null,
      source: "provider",
    };
    expect(outputLimitToSend(model("anthropic:claude-x", window, 8_192))).toBeUndefined();
  });

  it("is not sent for a model on an OpenAI-compatible server whose limit came from a catalog match", () => {
    const window: ContextWindow = {
      contextWindow: 131_072,
      maxOutputTokens: 8_192,
      source: "catalog",
    };
    expect(outputLimitToSend(model("litellm:gpt-4o", window, 8_192))).toBeUndefined();
  });

  it("is sent for any model an admin set a limit for", () => {
    const window: ContextWindow = {
      contextWindow: 32_768,
      maxOutputTokens: 2_000,
      source: "provider",
      outputOverride: { modelLimit: null },
    };
    expect(outputLimitToSend(model("local:llama", window, 2_000))).toBe(2_000);
  });

  it("never asks above the model's own known limit, whatever the override says", () => {
    const window: ContextWindow = {
      contextWindow: 200_000,
      maxOutputTokens: 100_000,
      source: "catalog",
      outputOverride: { modelLimit: 64_000 },
    };
    expect(outputLimitToSend(model("anthropic:claude-x", window, 100_000))).toBe(64_000);
  });
});
