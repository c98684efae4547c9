import { describe, expect, it } from "vitest";
import {
  formatContext,
  formatDuration,
  formatRate,
  formatShare,
  statsRows,
  summarizeStats,
} from "@/components/stats/format";
import type { MessageStats } from "@/lib/message/stats";

const stats: MessageStats = {
  model: "openai:gpt-4.1-mini",
  inputTokens: 1234,
  outputTokens: 456,
  cacheReadTokens: 1024,
  cacheWriteTokens: 0,
  reasoningTokens: 64,
  contextTokens: 12_800,
  steps: 2,
  startedAt: 10_000,
  firstTokenAt: 10_800,
  finishedAt: 21_657,
  finishReason: "stop",
};

describe("formatDuration", () => {
  it("shows milliseconds under a second", () => {
    expect(formatDuration(0)).toBe("0 ms");
    expect(formatDuration(450.4)).toBe("450 ms");
  });

  it("shows seconds with one decimal from a second up", () => {
    expect(formatDuration(1000)).toBe("1.0 s");
    expect(formatDuration(1234)).toBe("1.2 s");
    expect(formatDuration(125_350)).toBe("125.4 s");
    expect(formatDuration(3_600_000)).toBe("3,600.0 s");
  });

  it("switches to seconds when milliseconds would round up to 1000", () => {
    expect(formatDuration(999.6)).toBe("1.0 s");
  });

  it("shows a dash when unknown", () => {
    expect(formatDuration(null)).toBe("—");
  });
});

describe("formatRate", () => {
  it("rounds fast rates and keeps one decimal for slow ones", () => {
    expect(formatRate(42.3)).toBe("42 tok/s");
    expect(formatRate(1234.5)).toBe("1,235 tok/s");
    expect(formatRate(7.46)).toBe("7.5 tok/s");
    // Rounded to one decimal it is 10: shown without one, as every rate from 10 up.
    expect(formatRate(9.96)).toBe("10 tok/s");
    expect(formatRate(null)).toBe("—");
  });
});

describe("formatShare and formatContext", () => {
  it("rounds to whole percent, showing slivers as <1 %", () => {
    // The space before % does not break: a value never ends a line at "(10".
    expect(formatShare(12_800, 128_000)).toBe("10\u00a0%");
    expect(formatShare(100, 128_000)).toBe("<1\u00a0%");
    expect(formatShare(0, 128_000)).toBe("0\u00a0%");
    expect(formatShare(140_000, 128_000)).toBe("109\u00a0%");
  });

  it("adds the window only when it is known", () => {
    expect(formatContext(12_800, 128_000)).toBe("12,800 / 128,000 (10\u00a0%)");
    expect(formatContext(12_800)).toBe("12,800");
    expect(formatContext(12_800, 0)).toBe("12,800");
  });
});

describe("summarizeStats", () => {
  it("puts tokens, time to first token and speed on one line", () => {
    // 456 tokens over the 10,857 ms after the first token ≈ 42 tok/s.
    expect(summarizeStats(stats)).toBe("1,234 in · 456 out · 800 ms to first token · 42 tok/s");
  });

  it("leaves out the time to first token when no token arrived", () => {
    const none = { ...stats, outputTokens: 0, firstTokenAt: null, finishedAt: 10_000 };
    expect(summarizeStats(none)).toBe("1,234 in · 0 out");
  });
});

describe("statsRows", () => {
  it("lists every figure under a stable label", () => {
    expect(statsRows(stats, 128_000)).toEqual([
      { label: "Model", value: "openai:gpt-4.1-mini" },
      { label: "Input tokens", value: "1,234" },
      { label: "Output tokens", value: "456" },
      { label: "Cache read tokens", value: "1,024" },
      { label: "Cache write tokens", value: "0" },
      { label: "Reasoning tokens", value: "64" },
      { label: "Context tokens", value: "12,800 / 128,000 (10\u00a0%)" },
      { label: "Steps", value: "2" },
      { label: "Time to first token", value: "800 ms" },
      { label: "Total time", value: "11.7 s" },
      { label: "Tokens per second", value: "42 tok/s" },
      { label: "Finish reason", value: "stop" },
    ]);
  });

  it("shows a dash for timings that never happened", () => {
    const rows = statsRows({ ...stats, firstTokenAt: null });
    expect(rows.find((r) => r.label === "Time to first token")?.value).toBe("—");
    expect(rows.find((r) => r.label === "Context tokens")?.value).toBe("12,800");
  });
});
