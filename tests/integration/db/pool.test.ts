import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { openDatabase } from "@/lib/db/client";
import { describeEachDriver } from "../../helpers/databases";
import { createPostgresDatabase } from "../../helpers/postgres";

describeEachDriver(
  "the Postgres pool",
  (_use, driver) => {
    it.runIf(driver === "pg")(
      "keeps the connections a turn's start needs open while the server is quiet, and closes the rest",
      async () => {
        const created = await createPostgresDatabase();
        const idleTimeoutMs = 100;
        const database = await openDatabase({ url: created.url, idleTimeoutMs });
        try {
          if (database.driver !== "pg") throw new Error("expected a pg pool");
          // A busy moment: eight statements at once, each on a connection of its own.
          await Promise.all(
            Array.from({ length: 8 }, () => database.db.execute(sql`select pg_sleep(0.05)`)),
          );
          expect(database.pool.totalCount).toBe(8);
          // Quiet for longer than an idle connection is kept.
          await new Promise((resolve) => setTimeout(resolve, idleTimeoutMs * 5));
          const kept = database.pool.totalCount;
          expect(kept).toBeGreaterThanOrEqual(3);
          expect(kept).toBeLessThan(8);
          // Open on the server too, not just counted: the next turn's statements find them there.
          await Promise.all(Array.from({ length: 3 }, () => database.db.execute(sql`select 1`)));
          expect(database.pool.totalCount).toBe(kept);
        } finally {
          await database.close();
          await created.drop();
        }
      },
    );
  },
  { migrate: false },
);
