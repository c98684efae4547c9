// Builds the Next.js app when there is no build yet or a source file is newer than it.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

const SOURCES = [
  "app",
  "components",
  "lib",
  "public",
  "package-lock.json",
  "next.config.ts",
  "proxy.ts",
  "instrumentation.ts",
  "postcss.config.mjs",
  "tsconfig.json",
];
const BUILD_MARKER = ".next/BUILD_ID";

function newestMtimeMs(entry) {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(entry).reduce(
    (max, name) => Math.max(max, newestMtimeMs(path.join(entry, name))),
    stat.mtimeMs,
  );
}

export function buildIfNeeded() {
  const built = existsSync(BUILD_MARKER) ? statSync(BUILD_MARKER).mtimeMs : 0;
  const newest = Math.max(...SOURCES.map(newestMtimeMs));
  if (built > newest) return;
  console.log(
    built
      ? "Sources changed since the last build: rebuilding…"
      : "No build yet: building Fold (about a minute)…",
  );
  const result = spawnSync("npx", ["next", "build"], {
    stdio: "inherit",
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (import.meta.url === `file://${process.argv[1]}`) buildIfNeeded();
