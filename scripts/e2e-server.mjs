// The app as e2e tests see it: a production server on a fresh PGlite store, whose
// provider is the project's fake OpenAI-compatible server (real HTTP, real wire format).
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { nextStartArgs, serverNodeOptions } from "./server-runtime.mjs";

const dataDir = mkdtempSync(path.join(tmpdir(), "fold-e2e-"));
const port = process.env.E2E_PORT ?? "3100";
const fakePort = process.env.E2E_FAKE_PORT ?? "3199";

const fake = spawn(
  process.execPath,
  [
    "--experimental-strip-types",
    "--no-warnings",
    "tests/fixtures/fake-openai/cli.ts",
    "--port",
    fakePort,
    // fake:fake-model for the chat and admin specs; fake:small compacts after a few turns;
    // fake:skewed counts 2.5× what Fold estimates, so its first turn overflows (recovery spec).
    "--model",
    "fake-model:8192",
    "--model",
    "small:4096",
    "--model",
    "skewed:4096:2.5",
    "--chunk-delay",
    "15",
    // Long enough for the compaction spec to see the trace in its running state.
    "--summary-delay-ms",
    "1500",
  ],
  { stdio: ["ignore", "inherit", "inherit"] },
);

const server = spawn("npx", ["next", ...nextStartArgs(port, "127.0.0.1")], {
  stdio: "inherit",
  env: {
    ...process.env,
    NODE_OPTIONS: serverNodeOptions(),
    NEXT_TELEMETRY_DISABLED: "1",
    FOLD_DATA_DIR: dataDir,
    PGLITE_DIR: path.join(dataDir, "pglite"),
    BETTER_AUTH_SECRET: "e2e-secret-e2e-secret-e2e-secret-0123",
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    OPENAI_COMPATIBLE_BASE_URL: `http://127.0.0.1:${fakePort}/v1`,
    OPENAI_COMPATIBLE_NAME: "fake",
    DEMO_MODEL: "always",
    // The compaction spec watches a compaction run inside a turn, with its live trace; a
    // background compaction (the default) shows none yet, and is covered by integration tests.
    COMPACTION_BACKGROUND: process.env.COMPACTION_BACKGROUND ?? "false",
    // Every spec signs up and chats from 127.0.0.1: rate limits would only get in the way.
    RATE_LIMIT_SIGN_IN_PER_MINUTE: process.env.RATE_LIMIT_SIGN_IN_PER_MINUTE ?? "0",
    RATE_LIMIT_SIGN_IN_FAILURES_PER_ACCOUNT:
      process.env.RATE_LIMIT_SIGN_IN_FAILURES_PER_ACCOUNT ?? "0",
    RATE_LIMIT_SIGN_UP_PER_HOUR: process.env.RATE_LIMIT_SIGN_UP_PER_HOUR ?? "0",
    RATE_LIMIT_TURNS_PER_MINUTE: process.env.RATE_LIMIT_TURNS_PER_MINUTE ?? "0",
  },
});

function shutdown(signal) {
  fake.kill(signal);
  server.kill(signal);
}
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => shutdown(signal));
server.on("exit", (code) => {
  fake.kill("SIGTERM");
  process.exit(code ?? 0);
});
fake.on("exit", (code) => {
  if (code) console.error(`fake provider exited with ${code}`);
});
