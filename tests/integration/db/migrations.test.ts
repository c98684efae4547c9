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
