import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { windowTooSmall } from "@/lib/context/budget";
import { loadEnv } from "@/lib/env";

const quiet = () => undefined;

describe("OPENAI_COMPATIBLE_ASSUMED_CONTEXT (issue 15)", () => {
  it("is read per server, numbered like the other OPENAI_COMPATIBLE_* variables", () => {
    const env = loadEnv(
      {
        OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:11434/v1",
        OPENAI_COMPATIBLE_ASSUMED_CONTEXT: " 8192 ",
        OPENAI_COMPATIBLE_2_BASE_URL: "http://10.0.0.2:1234/v1",
        OPENAI_COMPATIBLE_3_BASE_URL: "http://10.0.0.3:11434/v1",
        OPENAI_COMPATIBLE_3_ASSUMED_CONTEXT: "32768",
      },
      quiet,
    );
    expect(env.providers.openaiCompatible).toEqual([
      { name: "local", baseUrl: "http://127.0.0.1:11434/v1", assumedContext: 8192 },
      { name: "local2", baseUrl: "http://10.0.0.2:1234/v1" },
      { name: "local3", baseUrl: "http://10.0.0.3:11434/v1", assumedContext: 32_768 },
    ]);
  });

  it("reports a value out of range and leaves the server without one", () => {
    const warnings: string[] = [];
    const env = loadEnv(
      {
        OPENAI_COMPATIBLE_BASE_URL: "http://a.example/v1",
        OPENAI_COMPATIBLE_ASSUMED_CONTEXT: "12",
        OPENAI_COMPATIBLE_4_ASSUMED_CONTEXT: "4096",
      },
      (message) => warnings.push(message),
    );
    expect(env.providers.openaiCompatible).toEqual([
      { name: "local", baseUrl: "http://a.example/v1" },
    ]);
    expect(warnings.some((w) => w.startsWith("OPENAI_COMPATIBLE_ASSUMED_CONTEXT="))).toBe(true);
    expect(warnings).toContain(
      "OPENAI_COMPATIBLE_4_BASE_URL is not set; ignoring the other OPENAI_COMPATIBLE_4_* variables",
    );
  });

  it("refuses a context too small to hold the reply's reserve and a short conversation", () => {
    const warnings: string[] = [];
    const env = loadEnv(
      {
        OPENAI_COMPATIBLE_BASE_URL: "http://a.example/v1",
        OPENAI_COMPATIBLE_ASSUMED_CONTEXT: "512",
      },
      (message) => warnings.push(message),
    );
    expect(env.providers.openaiCompatible).toEqual([
      { name: "local", baseUrl: "http://a.example/v1" },
    ]);
    expect(windowTooSmall({ contextWindow: 512, maxOutputTokens: null })).not.toBeNull();
    expect(warnings.some((w) => w.startsWith("OPENAI_COMPATIBLE_ASSUMED_CONTEXT="))).toBe(true);
  });

  it("is documented in .env.example with no default, for the first and the numbered servers", () => {
    const example = readFileSync(".env.example", "utf8");
    expect(example).toMatch(/^# OPENAI_COMPATIBLE_ASSUMED_CONTEXT=$/m);
    expect(example).toMatch(/^# OPENAI_COMPATIBLE_2_ASSUMED_CONTEXT=$/m);
  });
});
