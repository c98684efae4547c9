// The app as e2e tests see it: a production server on a fresh PGlite store.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const dataDir = mkdtempSync(path.join(tmpdir(), "fold-e2e-"));
const port = process.env.E2E_PORT ?? "3100";
const server = spawn("npx", ["next", "start", "-p", port, "-H", "127.0.0.1"], {
  stdio: "inherit",
  env: {
    ...process.env,
    NEXT_TELEMETRY_DISABLED: "1",
    FOLD_DATA_DIR: dataDir,
    PGLITE_DIR: path.join(dataDir, "pglite"),
    BETTER_AUTH_SECRET: "e2e-secret-e2e-secret-e2e-secret-0123",
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
  },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));
