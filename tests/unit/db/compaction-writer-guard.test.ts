import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// DESIGN §4: the four compaction columns have exactly one writer.
const WRITER = "lib/db/compaction-state.ts";
const SCHEMA = "lib/db/schema.ts";
const ROOTS = ["lib", "app"];
const COLUMN_KEYS = /\b(contextSummary|summaryWatermark|compactionDirty|version)\s*:/;
const COLUMN_SQL = /\b(context_summary|summary_watermark|compaction_dirty)\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.(ts|tsx)$/.test(name) ? [full] : [];
  });
}

/** Text of every `.update(chat).set({...})` and `.insert(chat).values({...})` call. */
function chatWrites(source: string): string[] {
  const writes: string[] = [];
  const opener = /\.(update|insert)\(\s*(?:schema\.)?chat\s*\)\s*\.(set|values)\(/g;
  for (let match = opener.exec(source); match; match = opener.exec(source)) {
    let depth = 1;
    let i = opener.lastIndex;
    while (i < source.length && depth > 0) {
      if (source[i] === "(") depth++;
      if (source[i] === ")") depth--;
      i++;
    }
    writes.push(source.slice(opener.lastIndex, i));
  }
  return writes;
}

describe("compaction state has one writer", () => {
  const files = ROOTS.flatMap((root) => sourceFiles(root)).filter(
    (f) => f !== WRITER && f !== SCHEMA,
  );

  it("no file but the writer sets the compaction columns through Drizzle", () => {
    const offenders = files.filter((file) =>
      chatWrites(readFileSync(file, "utf8")).some((write) => COLUMN_KEYS.test(write)),
    );
    expect(offenders).toEqual([]);
  });

  it("no file but the writer and the schema names the columns in SQL", () => {
    const offenders = files.filter((file) => COLUMN_SQL.test(readFileSync(file, "utf8")));
    expect(offenders).toEqual([]);
  });

  it("the scan finds a write when one is there", () => {
    const sample = "await db.update(chat).set({ title, compactionDirty: false }).where(x)";
    expect(chatWrites(sample).some((w) => COLUMN_KEYS.test(w))).toBe(true);
    expect(chatWrites("db.update(chat).set({ title: 'a' })").some((w) => COLUMN_KEYS.test(w))).toBe(
      false,
    );
  });
});
