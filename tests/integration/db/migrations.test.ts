import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { migrateDatabase } from "@/lib/db/migrate";
import { describeEachDriver } from "../../helpers/databases";
import { queryRows } from "../../helpers/db";

const TABLES = [
  "account",
  "allowed_model",
  "chat",
  "compaction_event",
  "disabled_session",
  "message",
  "message_branch",
  "model_calibration",
  "model_observed_window",
  "model_override",
  "provider_access",
  "quota_default",
  "rate_limit",
  "session",
  "usage_day",
  "user",
  "verification",
];

describeEachDriver(
  "migrations",
  (use) => {
    it("apply to an empty database and create every table", async () => {
      const database = use();
      await migrateDatabase(database);
      const tables = await queryRows<{ table_name: string }>(
        database.db,
        sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
      );
      expect(tables.map((row) => row.table_name)).toEqual(TABLES);
    });

    it("are idempotent: a second run changes nothing and does not fail", async () => {
      const database = use();
      const applied = sql`select count(*)::int as n from drizzle.__drizzle_migrations`;
      const before = await queryRows<{ n: number }>(database.db, applied);
      await migrateDatabase(database);
      const after = await queryRows<{ n: number }>(database.db, applied);
      expect(after).toEqual(before);
      expect(after[0]?.n).toBeGreaterThan(0);
    });

    it("index messages by (chat_id, seq) and cascade chat deletes", async () => {
      const database = use();
      const indexes = await queryRows<{ indexdef: string }>(
        database.db,
        sql`select indexdef from pg_indexes where tablename = 'message'`,
      );
      expect(indexes.some((row) => /\(chat_id, seq\)/.test(row.indexdef))).toBe(true);
      const cascades = await queryRows<{ confdeltype: string }>(
        database.db,
        sql`select confdeltype from pg_constraint where conrelid = 'message'::regclass and contype = 'f'`,
      );
      expect(cascades.map((row) => row.confdeltype)).toEqual(["c"]);
    });
  },
  { migrate: false },
);

/** A copy of `drizzle/` that ends before the migration `tag`: a database as it was before it. */
async function migrationsBefore(
  tag: string,
): Promise<{ folder: string; remove: () => Promise<void> }> {
  const folder = await mkdtemp(path.join(tmpdir(), "fold-migrations-"));
  await cp(path.join(process.cwd(), "drizzle"), folder, { recursive: true });
  const journalPath = path.join(folder, "meta", "_journal.json");
  const journal = JSON.parse(await readFile(journalPath, "utf8")) as {
    entries: Array<{ tag: string }>;
  };
  const at = journal.entries.findIndex((entry) => entry.tag === tag);
  if (at < 0) throw new Error(`no migration ${tag}`);
  journal.entries = journal.entries.slice(0, at);
  await writeFile(journalPath, JSON.stringify(journal));
  return { folder, remove: () => rm(folder, { recursive: true, force: true }) };
}

describeEachDriver(
  "migration 0013_chat_titled",
  (use) => {
    it("counts a chat made before it as titled unless it still shows a new chat's title", async () => {
      const database = use();
      const before = await migrationsBefore("0013_chat_titled");
      try {
        await migrateDatabase(database, before.folder);
      } finally {
        await before.remove();
      }
      await database.db.execute(
        sql`insert into "user" (id, name, email) values ('u-old', 'Old', 'old@example.com')`,
      );
      await database.db.execute(
        sql`insert into chat (user_id, title) values ('u-old', 'New chat'), ('u-old', 'Trip planning')`,
      );
      await migrateDatabase(database);
      const chats = await queryRows<{ title: string; titled: boolean }>(
        database.db,
        sql`select title, titled from chat order by title`,
      );
      expect(chats).toEqual([
        { title: "New chat", titled: false },
        { title: "Trip planning", titled: true },
      ]);
    });
  },
  { migrate: false },
);

describeEachDriver(
  "migration 0014_disabled_session_expiry",
  (use) => {
    it("gives a row a disable left before it the longest its session could have lasted", async () => {
      const database = use();
      const before = await migrationsBefore("0014_disabled_session_expiry");
      try {
        await migrateDatabase(database, before.folder);
      } finally {
        await before.remove();
      }
      await database.db.execute(
        sql`insert into "user" (id, name, email, status) values ('u-off', 'Off', 'off@example.com', 'disabled')`,
      );
      await database.db.execute(
        sql`insert into disabled_session (token_hash, user_id, created_at)
          values ('h-old', 'u-off', '2026-11-01T10:00:00Z')`,
      );
      await migrateDatabase(database);
      const rows = await queryRows<{ token_hash: string; expires_at: Date | string }>(
        database.db,
        sql`select token_hash, expires_at from disabled_session`,
      );
      // 30 days: the session lifetime (SESSION_DAYS, lib/auth/server.ts).
      expect(rows.map((row) => [row.token_hash, new Date(row.expires_at).toISOString()])).toEqual([
        ["h-old", "2026-12-01T10:00:00.000Z"],
      ]);
    });
  },
  { migrate: false },
);
