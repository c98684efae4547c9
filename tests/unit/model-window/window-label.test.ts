import { describe, expect, it } from "vitest";
import { describeWindow, truncationFix, windowLayers } from "@/lib/model-window/window-label";
import type { ChainWindow } from "@/lib/model-window/window-types";

const LOADED: ChainWindow = {
  contextWindow: 4096,
  maxOutputTokens: null,
  source: "provider",
  detail: { server: "ollama", basis: "loaded" },
  trainedWindow: 131_072,
};

describe("the words for a window", () => {
  it("names the server, how it knows, and what the model supports", () => {
    expect(describeWindow(LOADED)).toBe("Ollama, loaded at 4,096 — the model supports 131,072");
    expect(describeWindow({ ...LOADED, detail: { server: "ollama", basis: "assumed" } })).toBe(
      "Ollama default 4,096 (assumed: server default) — the model supports 131,072",
    );
    expect(
      describeWindow({
        contextWindow: 131_072,
        maxOutputTokens: null,
        source: "provider",
        detail: { server: "ollama", basis: "trained" },
      }),
    ).toBe("Ollama, trained length 131,072");
  });

  it("an observed window says what the server kept and what Fold had believed", () => {
    const chain: ChainWindow = { ...LOADED, contextWindow: 131_072, trainedWindow: undefined };
    chain.detail = { server: "ollama", basis: "trained" };
    expect(
      describeWindow({ contextWindow: 4096, maxOutputTokens: null, source: "observed", chain }),
    ).toBe(
      "observed: the server kept 4,096 tokens of a longer prompt — Fold had Ollama, trained length 131,072",
    );
  });

  it("splits the chain into the trained and the loaded window", () => {
    expect(windowLayers(LOADED)).toEqual({
      trained: { tokens: 131_072, from: "Ollama, model's trained length" },
      loaded: { tokens: 4096, from: "Ollama, loaded at 4,096" },
    });
    expect(
      windowLayers({
        contextWindow: 128_000,
        maxOutputTokens: 16_384,
        source: "catalog",
        matchedId: "openai:gpt-4o",
      }),
    ).toEqual({
      trained: { tokens: 128_000, from: "model catalog (openai:gpt-4o), 128,000" },
      loaded: null,
    });
    expect(windowLayers({ contextWindow: 8192, maxOutputTokens: null, source: "default" })).toEqual(
      { trained: null, loaded: null },
    );
  });

  it("gives each server's fix", () => {
    expect(truncationFix("ollama")).toContain("OLLAMA_CONTEXT_LENGTH");
    expect(truncationFix("ollama")).toContain("num_ctx");
    expect(truncationFix("lm-studio")).toContain("Reload the model");
    expect(truncationFix("llama.cpp")).toContain("--ctx-size");
    expect(truncationFix(undefined)).toContain("override in Admin → Models");
  });
});
