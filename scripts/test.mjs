// `npm test`: unit + integration (vitest, on PGlite and Postgres), then e2e (Playwright, Chromium).
import { spawnSync } from "node:child_process";
import { ensureNode22 } from "./node22.mjs";

ensureNode22();
for (const script of ["test:unit", "test:e2e"]) {
  const result = spawnSync("npm", ["run", script], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
