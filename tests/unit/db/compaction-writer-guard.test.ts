import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * DESIGN §4: the four compaction columns have exactly one writer,
 * lib/db/compaction-state.ts. This guard reads every source file and fails on
 * any Drizzle write to the chat table that sets them — or whose values it
 * cannot see (a variable, a spread, a computed key), since those could.
 */

const WRITER = "lib/db/compaction-state.ts";
const SCHEMA = "lib/db/schema.ts";
const ROOTS = ["lib", "app", "components", "scripts", "instrumentation.ts"];
const COLUMNS = ["contextSummary", "summaryWatermark", "compactionDirty", "version"];
const COLUMN_SQL = /\b(context_summary|summary_watermark|compaction_dirty)\b/;

function sourceFiles(entry: string): string[] {
  if (!statSync(entry, { throwIfNoEntry: false })) return [];
  if (!statSync(entry).isDirectory()) return /\.(ts|tsx|mjs)$/.test(entry) ? [entry] : [];
  return readdirSync(entry).flatMap((name) => sourceFiles(path.join(entry, name)));
}

/** How a file can name the chat table: `chat`, an alias of it, or `<namespace>.chat`. */
function chatTableNames(source: string): string[] {
  const names: string[] = [];
  for (const m of source.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*"[^"]*schema"/g)) {
    for (const spec of (m[1] ?? "").split(",")) {
      const named = /^\s*(?:type\s+)?chat(?:\s+as\s+(\w+))?\s*$/.exec(spec);
      if (named) names.push(named[1] ?? "chat");
    }
  }
  for (const m of source.matchAll(/import\s*\*\s*as\s+(\w+)\s+from\s*"[^"]*schema"/g)) {
    names.push(`${m[1]}.chat`);
  }
  return names;
}

/** The text between the bracket at `open` and its partner (strings and templates skipped). */
function bracketed(source: string, open: number): string {
  const pairs: Record<string, string> = { "(": ")", "{": "}", "[": "]" };
  const stack: string[] = [];
  for (let i = open; i < source.length; i++) {
    const ch = source[i] as string;
    if (ch === '"' || ch === "'" || ch === "`") {
      for (i++; i < source.length && source[i] !== ch; i++) if (source[i] === "\\") i++;
      continue;
    }
    if (pairs[ch]) stack.push(pairs[ch] as string);
    else if (ch === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return source.slice(open + 1, i);
    }
  }
  return source.slice(open + 1);
}

/** Top-level entries of an object literal's body: `key: value`, `key`, `...spread`, `[computed]: v`. */
function topLevelEntries(body: string): string[] {
  const entries: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch === '"' || ch === "'" || ch === "`") {
      for (i++; i < body.length && body[i] !== ch; i++) if (body[i] === "\\") i++;
      continue;
    }
    if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth--;
    else if (ch === "," && depth === 0) {
      entries.push(body.slice(start, i).trim());
      start = i + 1;
    }
  }
  entries.push(body.slice(start).trim());
  return entries.filter(Boolean);
}

/** Why one `.set(...)` / `.values(...)` argument may write a compaction column, or null. */
function argumentProblem(argument: string): string | null {
  const text = argument.trim();
  const objects = text.startsWith("[") ? topLevelEntries(text.slice(1, -1)) : [text];
  for (const object of objects) {
    if (!object.startsWith("{")) return `values the guard cannot see: ${object.slice(0, 40)}`;
    for (const entry of topLevelEntries(bracketed(object, 0))) {
      if (entry.startsWith("...")) return `a spread: ${entry.slice(0, 40)}`;
      if (entry.startsWith("[")) return `a computed key: ${entry.slice(0, 40)}`;
      const key = /^["']?(\w+)["']?\s*(?::|$)/.exec(entry)?.[1];
      if (key && COLUMNS.includes(key)) return `sets ${key}`;
    }
  }
  return null;
}

/** Every chat-table write in `source` that sets, or could set, a compaction column. */
function compactionWrites(source: string): string[] {
  const problems: string[] = [];
  for (const name of chatTableNames(source)) {
    const escaped = name.replace(".", "\\s*\\.\\s*");
    const opener = new RegExp(`\\.(update|insert)\\(\\s*${escaped}\\s*\\)`, "g");
    for (const match of source.matchAll(opener)) {
      const after = source.slice((match.index ?? 0) + match[0].length);
      const next = /^\s*\.(set|values)\s*\(/.exec(after);
      if (!next) {
        problems.push(`${match[0]} not followed by .set()/.values()`);
        continue;
      }
      const argument = bracketed(after, next[0].length - 1);
      const problem = argumentProblem(argument);
      if (problem) problems.push(`${match[0]}.${next[1]}(): ${problem}`);
    }
  }
  return problems;
}

describe("compaction state has one writer", () => {
  const files = ROOTS.flatMap((root) => sourceFiles(root)).filter(
    (f) => f !== WRITER && f !== SCHEMA,
  );

  it("no file but the writer sets the compaction columns through Drizzle", () => {
    const offenders = files.flatMap((file) =>
      compactionWrites(readFileSync(file, "utf8")).map((problem) => `${file}: ${problem}`),
    );
    expect(offenders).toEqual([]);
  });

  it("no file but the writer and the schema names the columns in SQL", () => {
    const offenders = files.filter((file) => COLUMN_SQL.test(readFileSync(file, "utf8")));
    expect(offenders).toEqual([]);
  });

  it("actually scans the files that write the chat table", () => {
    const writers = files.filter((file) =>
      /\.(update|insert)\(\s*chat\s*\)/.test(readFileSync(file, "utf8")),
    );
    expect(writers).toEqual(
      expect.arrayContaining(["lib/db/queries/chats.ts", "lib/db/queries/messages.ts"]),
    );
  });
});

describe("the guard catches every bypass", () => {
  const header = 'import { chat as chatTable, message } from "@/lib/db/schema";\n';
  const bypasses = {
    "an aliased table": `${header}await db.update(chatTable).set({ compactionDirty: false }).where(x);`,
    "a variable patch": `${header}const patch = build(); await db.update(chatTable).set(patch);`,
    "a spread": `${header}await tx.update(chatTable).set({ title, ...patch });`,
    "a shorthand key": `${header}await db.update(chatTable).set({ contextSummary, updatedAt });`,
    "a quoted key": `${header}await db.update(chatTable).set({ "version": 3 });`,
    "a computed key": `${header}await db.update(chatTable).set({ [column]: null });`,
    "an insert": `${header}await db.insert(chatTable).values({ userId, summaryWatermark: "m1" });`,
    "an insert of many": `${header}await db.insert(chatTable).values([{ userId }, { userId, version: 2 }]);`,
    "a split chain": `${header}const q = db.update(chatTable); await q.set({ version: 1 });`,
    "a namespace import":
      'import * as schema from "../schema";\nawait db.update(schema.chat).set({ compactionDirty: true });',
    "the plain name over lines":
      'import { chat } from "../schema";\nawait db\n  .update(chat)\n  .set({\n    title: "a",\n    version: sql`1`,\n  });',
  };
  for (const [name, source] of Object.entries(bypasses)) {
    it(`fails on ${name}`, () => {
      expect(compactionWrites(source)).not.toEqual([]);
    });
  }

  it("passes writes that cannot touch the columns", () => {
    const fine = [
      `${header}await db.update(chatTable).set({ title: patch.title, updatedAt: new Date() });`,
      `${header}await db.update(message).set(patch);`,
      `${header}await db.insert(chatTable).values({ userId, title: "x,{version: 1}" });`,
      `${header}await db.delete(chatTable).where(eq(chatTable.id, id));`,
    ];
    expect(fine.flatMap(compactionWrites)).toEqual([]);
  });
});
