import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { COMPACTION_DEFAULTS, loadEnv } from "@/lib/env";

const quiet = () => undefined;

describe("environment", () => {
  it("has a default for every knob when nothing is set", () => {
    const env = loadEnv({}, quiet);
    expect(env.databaseUrl).toBeUndefined();
    expect(env.pgliteDir).toBe("./.data/pglite");
    expect(env.compaction).toMatchObject({
      enabled: true,
      ...COMPACTION_DEFAULTS,
      summarizerModels: [],
    });
  });

  it("replaces an out-of-range value with its default and says so", () => {
    const warnings: string[] = [];
    const env = loadEnv(
      {
        COMPACTION_TRIGGER_RATIO: "1.7",
        COMPACTION_SUMMARIZER_TIMEOUT_MS: "-5",
        COMPACTION_ENABLED: "perhaps",
      },
      (m) => warnings.push(m),
    );
    expect(env.compaction.triggerRatio).toBe(COMPACTION_DEFAULTS.triggerRatio);
    expect(env.compaction.summarizerTimeoutMs).toBe(COMPACTION_DEFAULTS.summarizerTimeoutMs);
    expect(env.compaction.enabled).toBe(true);
    expect(warnings).toHaveLength(3);
    for (const name of [
      "COMPACTION_TRIGGER_RATIO",
      "COMPACTION_SUMMARIZER_TIMEOUT_MS",
      "COMPACTION_ENABLED",
    ]) {
      expect(warnings.some((w) => w.startsWith(`${name}=`))).toBe(true);
    }
  });

  it("parses lists and booleans", () => {
    const env = loadEnv(
      {
        ADMIN_EMAILS: " A@x.io, b@y.io ,",
        COMPACTION_ENABLED: "false",
        COMPACTION_SUMMARIZER_MODELS: "openai:gpt-4o-mini,demo:demo",
      },
      quiet,
    );
    expect(env.adminEmails).toEqual(["a@x.io", "b@y.io"]);
    expect(env.compaction.enabled).toBe(false);
    expect(env.compaction.summarizerModels).toEqual(["openai:gpt-4o-mini", "demo:demo"]);
  });

  it(".env.example documents every compaction knob with the code's default", () => {
    const example = readFileSync(".env.example", "utf8");
    const documented = Object.fromEntries(
      [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1], m[2]?.trim()]),
    );
    const expected: Record<string, string> = {
      COMPACTION_ENABLED: "true",
      COMPACTION_TRIGGER_RATIO: String(COMPACTION_DEFAULTS.triggerRatio),
      COMPACTION_TARGET_RATIO: String(COMPACTION_DEFAULTS.targetRatio),
      COMPACTION_RESERVE_RATIO: String(COMPACTION_DEFAULTS.reserveRatio),
      COMPACTION_KEEP_RECENT_RATIO: String(COMPACTION_DEFAULTS.keepRecentRatio),
      COMPACTION_KEEP_RECENT_TOOL_RESULTS: String(COMPACTION_DEFAULTS.keepRecentToolResults),
      COMPACTION_SUMMARY_RATIO: String(COMPACTION_DEFAULTS.summaryRatio),
      COMPACTION_BULKY_RATIO: String(COMPACTION_DEFAULTS.bulkyRatio),
      COMPACTION_SUMMARIZER_TIMEOUT_MS: String(COMPACTION_DEFAULTS.summarizerTimeoutMs),
    };
    for (const [name, value] of Object.entries(expected))
      expect(documented[name], name).toBe(value);
    for (const name of [
      "DATABASE_URL",
      "BETTER_AUTH_SECRET",
      "ADMIN_EMAILS",
      "OPENAI_API_KEY",
      "ANTHROPIC_API_KEY",
      "GOOGLE_GENERATIVE_AI_API_KEY",
      "OPENROUTER_API_KEY",
      "OPENAI_COMPATIBLE_BASE_URL",
      "OPENAI_COMPATIBLE_API_KEY",
      "OPENAI_COMPATIBLE_NAME",
      "COMPACTION_SUMMARIZER_MODELS",
    ]) {
      expect(name in documented, name).toBe(true);
    }
  });
});
