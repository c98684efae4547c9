import { afterAll, expect, it, vi } from "vitest";

// A provider that counts with Qwen 3's real tokenizer and chat framing (issue 13).
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({
    models: [{ id: "qwen", maxModelLen: 128_000, tokenizer: "qwen3" }],
  });
});

import { COLD_CLASS_RATIOS } from "@/lib/context/calibration";
import { getCalibration } from "@/lib/db/queries/calibration";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { estimateMisses } from "../../helpers/turns";

afterAll(() => fake.close());

/** Rows of readings: Qwen 3 spends a token per digit where o200k spends one per three. */
function readings(turn: number): string {
  const rows: string[] = [];
  for (let i = 0; i < 40; i++) {
    const a = (turn * 7_919 + i * 104_729) % 1_000_000;
    const b = (turn * 15_485_863 + i * 32_452_843) % 10_000_000;
    rows.push(`| S${1000 + i} | ${a} | ${b} | ${(a % 977) / 10} |`);
  }
  return `Which sensors look off?\n\n${rows.join("\n")}`;
}

const PROMPTS = [
  readings(1),
  "请用中文解释一下为什么缓存命中率下降时要先检查键的过期时间。",
  readings(2),
  "Summarize the differences between TCP and QUIC congestion control.",
  readings(3),
  readings(4),
];

describeEachDriver("per-class self-calibration", (use) => {
  it("learns a Qwen 3 provider by content class and stores the fit", async () => {
    const database = use();
    const { browser } = await register(database, "qwen-cal@example.com");
    fake.reset();
    const errors = await estimateMisses(database, browser, {
      modelId: "fake:qwen",
      prompts: PROMPTS,
      promptTokens: (turn) => fake.requests[turn]?.promptTokens ?? 0,
    });

    const calibration = await getCalibration(database.db, "fake", "qwen");
    expect(calibration?.samples).toBe(PROMPTS.length);
    const ratios = calibration?.classFit?.ratios;
    if (!ratios) throw new Error("expected a per-class fit in model_calibration.class_fit");
    // o200k's three-digit groups cost Qwen three tokens, Chinese less than the cautious
    // prior; a writing system no turn carried never rises above its cold prior.
    expect(ratios.digits3).toBeGreaterThan(2.5);
    expect(ratios.digits1).toBeCloseTo(1, 1);
    expect(ratios.han).toBeLessThan(COLD_CLASS_RATIOS.han - 0.2);
    expect(ratios.indic).toBeLessThanOrEqual(COLD_CLASS_RATIOS.indic);
    expect(ratios.script).toBeLessThanOrEqual(COLD_CLASS_RATIOS.script);
    // Cold: never under by more than the 5 % reserve. Learned: the last turns are close.
    expect(errors[0]).toBeGreaterThan(-0.05);
    for (const error of errors.slice(4)) expect(Math.abs(error)).toBeLessThan(0.03);
  });
});
