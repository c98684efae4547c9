// `npm run test:e2e`: Playwright against a production build, in Debian's Chromium.
// Without Chromium the suite is skipped loudly — and under CI=true that is a failure.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { buildIfNeeded } from "./build-if-needed.mjs";

const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(chromium)) {
  const inCi = process.env.CI === "true";
  console.error(
    `\n*** E2E SUITE ${inCi ? "FAILED" : "SKIPPED"}: no Chromium at ${chromium}. ` +
      "Install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH. ***\n",
  );
  process.exit(inCi ? 1 : 0);
}

process.env.NEXT_TELEMETRY_DISABLED = "1";
buildIfNeeded();
const result = spawnSync("npx", ["playwright", "test", ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...process.env, CHROMIUM_PATH: chromium },
});
process.exit(result.status ?? 1);
