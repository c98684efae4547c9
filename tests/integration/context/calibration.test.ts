import { afterAll, expect, it, vi } from "vitest";

// A provider whose tokenizer counts 12 % more than o200k.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({
    models: [{ id: "skewed", maxModelLen: 128_000 }],
    tokenScale: 1.12,
  });
});

import { getCalibration } from "@/lib/db/queries/calibration";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { estimateMisses } from "../../helpers/turns";

afterAll(() => fake.close());

const PROMPTS = [
  "Explain how a B-tree keeps itself balanced when keys are inserted.",
  "Now compare that with a skip list, and say which is easier to implement.",
  "Write a short TypeScript function that merges two sorted arrays.",
  "What are the failure modes of two-phase commit? Be specific.",
  "Summarize the differences between TCP and QUIC congestion control.",
  "Give me three names for a tea shop in Kyoto.",
];

describeEachDriver("self-calibration", (use) => {
  it("learns a provider that counts 12 % more: cold-start error falls under 3 % within 5 turns", async () => {
    const database = use();
    const { browser } = await register(database, "cal@example.com");
    fake.reset();
    const errors = await estimateMisses(database, browser, {
      modelId: "fake:skewed",
      prompts: PROMPTS,
      promptTokens: (turn) => fake.requests[turn]?.promptTokens ?? 0,
    });

    // Cold start uses the 1.15 margin: close, but not yet right.
    expect(errors[0]).toBeGreaterThan(0.005);
    for (const error of errors.slice(4)) expect(Math.abs(error)).toBeLessThan(0.03);
    const calibration = await getCalibration(database.db, "fake", "skewed");
    expect(calibration?.samples).toBe(PROMPTS.length);
    expect(calibration?.ratio).toBeGreaterThan(1.05);
    expect(calibration?.ratio).toBeLessThan(1.2);
  });
});
