import { describe, expect, it } from "vitest";
import { readableModelName } from "@/components/stats/model-labels";

describe("readableModelName", () => {
  it("names the provider after the model", () => {
    expect(readableModelName({ label: "GPT-4.1", providerLabel: "OpenAI" })).toBe(
      "GPT-4.1 (OpenAI)",
    );
    expect(readableModelName({ label: "fake-model", providerLabel: "fake" })).toBe(
      "fake-model (fake)",
    );
  });

  it("does not repeat a provider the label already starts with", () => {
    expect(readableModelName({ label: "Demo (offline)", providerLabel: "Demo" })).toBe(
      "Demo (offline)",
    );
  });
});
