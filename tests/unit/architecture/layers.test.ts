import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/**
 * DESIGN §1.6: lib/compaction and lib/context are pure. Biome's
 * noRestrictedImports (biome.json, overrides) enforces it, so a forbidden
 * import fails `npm run lint`. These probes are real files in the pure
 * folders, linted with the project's own configuration.
 */

const ROOT = path.resolve(__dirname, "../../..");
const BIOME = path.join(ROOT, "node_modules/.bin/biome");
const PROBE_NAME = `layer-probe-${process.pid}.ts`;

type Diagnostic = { category: string; location: { path: string } };

const probes: string[] = [];

/** Writes one probe per import line into `folder` and returns each probe's restricted-import count. */
function lintProbes(folder: string, imports: readonly string[]): number[] {
  const files = imports.map((line, i) => {
    const file = path.join(ROOT, folder, `${i}-${PROBE_NAME}`);
    writeFileSync(file, `${line}\nexport const probe = [used];\n`.replace("used", usedName(line)));
    probes.push(file);
    return path.relative(ROOT, file);
  });
  let output = "";
  try {
    output = execFileSync(BIOME, ["lint", "--reporter=json", ...files], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? "");
  }
  const diagnostics = (JSON.parse(output) as { diagnostics: Diagnostic[] }).diagnostics;
  return files.map(
    (file) =>
      diagnostics.filter(
        (d) =>
          d.category === "lint/style/noRestrictedImports" &&
          path.normalize(d.location.path) === path.normalize(file),
      ).length,
  );
}

function usedName(importLine: string): string {
  return /import \{ (?:type )?(\w+)/.exec(importLine)?.[1] ?? "undefined";
}

const FORBIDDEN = [
  'import { getDb } from "@/lib/db/client";',
  'import { commitCompactionState } from "@/lib/db/compaction-state";',
  'import { env } from "@/lib/env";',
  'import { log } from "@/lib/log";',
  'import { runTurn } from "@/lib/turn/run-turn";',
  'import { compactChat } from "@/lib/chat/compact";',
  'import { resolveContextWindow } from "@/lib/model-window/window";',
  'import { builtinTools } from "@/lib/ai/tools";',
  'import { generateText } from "ai";',
  'import { streamText } from "ai";',
  'import { eq } from "drizzle-orm";',
  'import { getDb } from "../db/client";',
];

const ALLOWED = [
  'import { createEstimator } from "@/lib/context/tokens";',
  'import { buildView } from "@/lib/compaction/view";',
  'import { rowToUIMessage } from "@/lib/message/ui-message";',
  'import { getToolName } from "ai";',
  'import { z } from "zod";',
];

afterAll(() => {
  for (const file of probes) rmSync(file, { force: true });
});

describe("the pure layers (biome noRestrictedImports)", () => {
  it("fails lint on every forbidden import into lib/compaction", () => {
    expect(lintProbes("lib/compaction", FORBIDDEN).every((n) => n > 0)).toBe(true);
  });

  it("fails lint on every forbidden import into lib/context", () => {
    expect(lintProbes("lib/context", FORBIDDEN).every((n) => n > 0)).toBe(true);
  });

  it("lets the pure layers import each other, lib/message and plain libraries", () => {
    expect(lintProbes("lib/compaction", ALLOWED)).toEqual(ALLOWED.map(() => 0));
  });

  it("leaves the shell free to do I/O", () => {
    expect(lintProbes("lib/chat", FORBIDDEN.slice(0, 9))).toEqual(
      FORBIDDEN.slice(0, 9).map(() => 0),
    );
  });
});
