import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  COMPACTION_DEFAULTS,
  loadEnv,
  RATE_LIMIT_DEFAULTS,
  TURN_DEADLINE_DEFAULTS,
  TURN_MAX_STEPS_DEFAULT,
} from "@/lib/env";

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
        COMPACTION_ENABLED: "false",
        COMPACTION_SUMMARIZER_MODELS: "openai:gpt-4o-mini,demo:demo",
      },
      quiet,
    );
    expect(env.compaction.enabled).toBe(false);
    expect(loadEnv({ AI_TELEMETRY: "on" }, quiet).aiTelemetry).toBe(true);
    expect(env.compaction.summarizerModels).toEqual(["openai:gpt-4o-mini", "demo:demo"]);
  });

  it("reports a summarizer entry that is no provider:model id, naming the variable, and leaves it out", () => {
    const warnings: string[] = [];
    const env = loadEnv({ COMPACTION_SUMMARIZER_MODELS: "gpt-4o-mini, demo:demo" }, (m) =>
      warnings.push(m),
    );
    expect(env.compaction.summarizerModels).toEqual(["demo:demo"]);
    expect(warnings).toEqual([
      'COMPACTION_SUMMARIZER_MODELS: "gpt-4o-mini" is not a provider:model id (e.g. openai:gpt-4o-mini); left out',
    ]);
  });

  it("defaults to approval, no trusted proxy, no Redis, and the documented rate limits", () => {
    const env = loadEnv({}, quiet);
    expect(env.registration).toBe("approval");
    expect(env.trustProxy).toBe(0);
    expect(env.redisUrl).toBeUndefined();
    expect(env.rateLimits).toEqual(RATE_LIMIT_DEFAULTS);
  });

  it("reads registration, proxy hops, Redis and rate limits, and repairs bad values", () => {
    const warnings: string[] = [];
    const env = loadEnv(
      {
        REGISTRATION: "closed",
        TRUST_PROXY: "2",
        REDIS_URL: "redis://127.0.0.1:6379",
        BETTER_AUTH_SECRET: "s".repeat(32),
        RATE_LIMIT_SIGN_IN_PER_MINUTE: "0",
        RATE_LIMIT_TURNS_PER_MINUTE: "-3",
      },
      (m) => warnings.push(m),
    );
    expect(env).toMatchObject({
      registration: "closed",
      trustProxy: 2,
      redisUrl: "redis://127.0.0.1:6379",
      rateLimits: { signInPerMinute: 0, turnsPerMinute: RATE_LIMIT_DEFAULTS.turnsPerMinute },
    });
    expect(warnings).toEqual([expect.stringMatching(/^RATE_LIMIT_TURNS_PER_MINUTE=/)]);
    const wrong = loadEnv(
      { REGISTRATION: "invite", TRUST_PROXY: "true", REDIS_URL: "http://x" },
      quiet,
    );
    expect(wrong).toMatchObject({ registration: "approval", trustProxy: 0, redisUrl: undefined });
  });

  it("never shows the value of an invalid setting that may hold a credential", () => {
    const warnings: string[] = [];
    const env = loadEnv(
      {
        // A raw `#` in a password makes the URL invalid: a common slip.
        DATABASE_URL: "postgres://fold:Xy7#Secret@db.internal:5432/fold",
        BETTER_AUTH_SECRET: "short-but-real-secret-123",
        REDIS_URL: "redis://:Xy7#RedisPass@cache:6379",
        OPENAI_COMPATIBLE_BASE_URL: "ftp://user:pa55word@llm.example/v1",
        // Not a credential: its value helps whoever fixes the typo.
        COMPACTION_TRIGGER_RATIO: "1.7",
      },
      (m) => warnings.push(m),
    );
    expect(env).toMatchObject({
      databaseUrl: undefined,
      authSecret: undefined,
      redisUrl: undefined,
    });
    expect(warnings).toHaveLength(5);
    for (const name of [
      "DATABASE_URL",
      "BETTER_AUTH_SECRET",
      "REDIS_URL",
      "OPENAI_COMPATIBLE_BASE_URL",
    ]) {
      expect(warnings.some((w) => w.startsWith(`${name} is invalid`))).toBe(true);
    }
    expect(warnings.join("\n")).not.toMatch(/Secret|RedisPass|short-but-real|pa55word/);
    expect(warnings).toContainEqual(expect.stringMatching(/^COMPACTION_TRIGGER_RATIO="1.7"/));
  });

  it("refuses a server base URL that holds a user name or password, and says where the key goes", () => {
    const warnings: string[] = [];
    const env = loadEnv(
      {
        OPENAI_COMPATIBLE_BASE_URL: "http://fold:pa55word@llm.example/v1",
        OPENAI_COMPATIBLE_2_BASE_URL: "http://10.0.0.2:8000/v1",
      },
      (m) => warnings.push(m),
    );
    expect(env.providers.openaiCompatible.map((s) => s.baseUrl)).toEqual([
      "http://10.0.0.2:8000/v1",
    ]);
    expect(warnings).toEqual([
      "OPENAI_COMPATIBLE_BASE_URL is invalid (it holds a user name or password; put the key in the matching _API_KEY instead); ignoring it",
    ]);
  });

  it("gives a server base URL that is only its root the /v1 path the API is served under, and says so", () => {
    const warnings: string[] = [];
    const env = loadEnv(
      {
        OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:11434",
        OPENAI_COMPATIBLE_2_BASE_URL: "http://10.0.0.2:8000/",
        OPENAI_COMPATIBLE_3_BASE_URL: "https://gateway.example/openai",
        OPENAI_COMPATIBLE_4_BASE_URL: "http://10.0.0.4:1234/v1/",
      },
      (m) => warnings.push(m),
    );
    expect(env.providers.openaiCompatible.map((s) => s.baseUrl)).toEqual([
      "http://127.0.0.1:11434/v1",
      "http://10.0.0.2:8000/v1",
      "https://gateway.example/openai",
      "http://10.0.0.4:1234/v1/",
    ]);
    expect(warnings).toEqual([
      "OPENAI_COMPATIBLE_BASE_URL has no path; using http://127.0.0.1:11434/v1, where OpenAI-compatible servers serve their API",
      "OPENAI_COMPATIBLE_2_BASE_URL has no path; using http://10.0.0.2:8000/v1, where OpenAI-compatible servers serve their API",
    ]);
  });

  it("marks a DATABASE_URL that is set but invalid, so no embedded database stands in for it", () => {
    const bad = loadEnv({ DATABASE_URL: "postgres://fold:a#b@db/fold" }, quiet);
    expect(bad).toMatchObject({ databaseUrl: undefined, databaseUrlInvalid: true });
    expect(loadEnv({}, quiet).databaseUrlInvalid).toBe(false);
    // No scheme, or another database's: `localhost:5432/fold` reads as a URL of scheme `localhost`.
    for (const other of ["localhost:5432/fold", "db.internal:5432", "mysql://fold@db/fold"]) {
      expect(loadEnv({ DATABASE_URL: other }, quiet), other).toMatchObject({
        databaseUrl: undefined,
        databaseUrlInvalid: true,
      });
    }
    for (const form of ["postgresql://fold@db/fold", "socket:/var/run/postgresql?db=fold"]) {
      expect(loadEnv({ DATABASE_URL: form }, quiet).databaseUrlInvalid, form).toBe(false);
    }
    const good = loadEnv({ DATABASE_URL: "postgres://fold:a%23b@db/fold" }, quiet);
    expect(good).toMatchObject({
      databaseUrl: "postgres://fold:a%23b@db/fold",
      databaseUrlInvalid: false,
    });
  });

  it("says ADMIN_EMAILS is no longer read", () => {
    const warnings: string[] = [];
    loadEnv({ ADMIN_EMAILS: "boss@example.com" }, (m) => warnings.push(m));
    expect(warnings).toEqual([expect.stringContaining("ADMIN_EMAILS is no longer read")]);
  });

  it("warns in production when BETTER_AUTH_URL is not set, and only then", () => {
    const warnings: string[] = [];
    loadEnv({ NODE_ENV: "production" }, (m) => warnings.push(m));
    expect(warnings).toEqual([expect.stringContaining("BETTER_AUTH_URL is not set")]);
    warnings.length = 0;
    loadEnv({ NODE_ENV: "production", BETTER_AUTH_URL: "https://fold.example.com" }, (m) =>
      warnings.push(m),
    );
    loadEnv({ NODE_ENV: "development" }, (m) => warnings.push(m));
    expect(warnings).toEqual([]);
  });

  it("warns at start when DEMO_MODEL=never leaves no model to answer with, and only then", () => {
    const warnings: string[] = [];
    loadEnv({ DEMO_MODEL: "never" }, (m) => warnings.push(m));
    expect(warnings).toEqual([expect.stringContaining("no chat can be answered")]);
    warnings.length = 0;
    loadEnv({ DEMO_MODEL: "never", ANTHROPIC_API_KEY: "sk-ant-x" }, (m) => warnings.push(m));
    loadEnv({ DEMO_MODEL: "never", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:11434/v1" }, (m) =>
      warnings.push(m),
    );
    loadEnv({}, (m) => warnings.push(m));
    expect(warnings).toEqual([]);
  });

  it("warns when several instances (REDIS_URL) would each sign sessions with a secret of their own", () => {
    const warnings: string[] = [];
    loadEnv({ REDIS_URL: "redis://127.0.0.1:6379" }, (m) => warnings.push(m));
    expect(warnings).toEqual([expect.stringMatching(/BETTER_AUTH_SECRET is not set/)]);
    warnings.length = 0;
    loadEnv({ REDIS_URL: "redis://127.0.0.1:6379", BETTER_AUTH_SECRET: "short" }, (m) =>
      warnings.push(m),
    );
    expect(warnings).toEqual([
      expect.stringMatching(/^BETTER_AUTH_SECRET is invalid/),
      expect.stringMatching(/BETTER_AUTH_SECRET is invalid: instances/),
    ]);
    warnings.length = 0;
    loadEnv({ REDIS_URL: "redis://127.0.0.1:6379", BETTER_AUTH_SECRET: "s".repeat(32) }, (m) =>
      warnings.push(m),
    );
    loadEnv({}, (m) => warnings.push(m));
    expect(warnings).toEqual([]);
  });

  it("reads numbered OpenAI-compatible servers with default names", () => {
    const env = loadEnv(
      {
        OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:11434/v1",
        OPENAI_COMPATIBLE_2_BASE_URL: "http://10.0.0.2:8000/v1/",
        OPENAI_COMPATIBLE_2_API_KEY: " secret ",
        OPENAI_COMPATIBLE_9_BASE_URL: "https://llm.example.com/v1",
        OPENAI_COMPATIBLE_9_NAME: "gpu-box",
      },
      quiet,
    );
    expect(env.providers.openaiCompatible).toEqual([
      { name: "local", baseUrl: "http://127.0.0.1:11434/v1" },
      { name: "local2", baseUrl: "http://10.0.0.2:8000/v1/", apiKey: "secret" },
      { name: "gpu-box", baseUrl: "https://llm.example.com/v1" },
    ]);
    expect(loadEnv({}, quiet).providers.openaiCompatible).toEqual([]);
  });

  it("skips an OpenAI-compatible server whose name is taken and says why", () => {
    const warnings: string[] = [];
    const env = loadEnv(
      {
        OPENAI_COMPATIBLE_BASE_URL: "http://a.example/v1",
        OPENAI_COMPATIBLE_NAME: "openai",
        OPENAI_COMPATIBLE_2_BASE_URL: "http://b.example/v1",
        OPENAI_COMPATIBLE_2_NAME: "box",
        OPENAI_COMPATIBLE_3_BASE_URL: "http://c.example/v1",
        OPENAI_COMPATIBLE_3_NAME: "box",
        OPENAI_COMPATIBLE_4_BASE_URL: "http://d.example/v1",
        OPENAI_COMPATIBLE_4_NAME: "Not Valid",
        OPENAI_COMPATIBLE_5_BASE_URL: "ftp://e.example/v1",
        OPENAI_COMPATIBLE_6_API_KEY: "orphan",
      },
      (m) => warnings.push(m),
    );
    expect(env.providers.openaiCompatible).toEqual([
      { name: "box", baseUrl: "http://b.example/v1" },
      { name: "local4", baseUrl: "http://d.example/v1" },
    ]);
    for (const name of [
      "OPENAI_COMPATIBLE_NAME",
      "OPENAI_COMPATIBLE_3_NAME",
      "OPENAI_COMPATIBLE_4_NAME",
      "OPENAI_COMPATIBLE_5_BASE_URL",
      "OPENAI_COMPATIBLE_6_BASE_URL",
    ]) {
      expect(
        warnings.some((w) => w.startsWith(name)),
        name,
      ).toBe(true);
    }
    expect(warnings).toHaveLength(5);
  });

  it(".env.example documents every knob with the code's default", () => {
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
      COMPACTION_LEDGER_SHARE: String(COMPACTION_DEFAULTS.ledgerShare),
      TURN_MAX_STEPS: String(TURN_MAX_STEPS_DEFAULT),
      TURN_IDLE_TIMEOUT_MS: String(TURN_DEADLINE_DEFAULTS.idleMs),
      TURN_FIRST_TOKEN_TIMEOUT_MS: String(TURN_DEADLINE_DEFAULTS.firstTokenMs),
      TURN_MAX_DURATION_MS: String(TURN_DEADLINE_DEFAULTS.maxMs),
      COMPACTION_BULKY_RATIO: String(COMPACTION_DEFAULTS.bulkyRatio),
      COMPACTION_SUMMARIZER_TIMEOUT_MS: String(COMPACTION_DEFAULTS.summarizerTimeoutMs),
      DEMO_MODEL: loadEnv({}, quiet).demoModel,
      REGISTRATION: loadEnv({}, quiet).registration,
      TRUST_PROXY: String(loadEnv({}, quiet).trustProxy),
      RATE_LIMIT_SIGN_IN_PER_MINUTE: String(RATE_LIMIT_DEFAULTS.signInPerMinute),
      RATE_LIMIT_SIGN_IN_FAILURES_PER_ACCOUNT: String(RATE_LIMIT_DEFAULTS.signInFailuresPerAccount),
      RATE_LIMIT_SIGN_UP_PER_HOUR: String(RATE_LIMIT_DEFAULTS.signUpPerHour),
      RATE_LIMIT_TURNS_PER_MINUTE: String(RATE_LIMIT_DEFAULTS.turnsPerMinute),
      REDIS_URL: "",
      AI_TELEMETRY: String(loadEnv({}, quiet).aiTelemetry),
    };
    const [first, second] = loadEnv(
      {
        OPENAI_COMPATIBLE_BASE_URL: "http://a.example/v1",
        OPENAI_COMPATIBLE_2_BASE_URL: "http://b.example/v1",
      },
      quiet,
    ).providers.openaiCompatible;
    expected.OPENAI_COMPATIBLE_NAME = first?.name ?? "";
    expected.OPENAI_COMPATIBLE_2_NAME = second?.name ?? "";
    for (const [name, value] of Object.entries(expected))
      expect(documented[name], name).toBe(value);
    for (const name of [
      "DATABASE_URL",
      "BETTER_AUTH_SECRET",
      "OPENAI_API_KEY",
      "ANTHROPIC_API_KEY",
      "GOOGLE_GENERATIVE_AI_API_KEY",
      "OPENROUTER_API_KEY",
      "OPENAI_COMPATIBLE_BASE_URL",
      "OPENAI_COMPATIBLE_API_KEY",
      "OPENAI_COMPATIBLE_NAME",
      "OPENAI_COMPATIBLE_2_BASE_URL",
      "OPENAI_COMPATIBLE_2_API_KEY",
      "OPENAI_COMPATIBLE_2_NAME",
      "COMPACTION_SUMMARIZER_MODELS",
    ]) {
      expect(name in documented, name).toBe(true);
    }
  });
});
