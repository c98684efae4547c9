import { eq, sql } from "drizzle-orm";
import { expect, it, vi } from "vitest";
import { countNoise } from "@/lib/context/calibration";
import { emptyClassTokens } from "@/lib/context/content-class";
import { getCalibration, recordCalibrationSample } from "@/lib/db/queries/calibration";
import { modelCalibration } from "@/lib/db/schema";
import { describeEachDriver } from "../../helpers/databases";
import { queryRows } from "../../helpers/db";

const sample = (realTokens: number) => ({
  realTokens,
  raw: { ...emptyClassTokens(), prose: 1_000, frame: 40 },
});

describeEachDriver("calibration writes", (use) => {
  it("stores how far the last counts missed, so a model's jumpy counts are known to the next read", async () => {
    const { db } = use();
    for (let i = 0; i < 12; i++) {
      await recordCalibrationSample(db, "fake", "jumpy", sample(i % 2 === 0 ? 880 : 1_320));
    }
    const [row] = await db
      .select({ classFit: modelCalibration.classFit })
      .from(modelCalibration)
      .where(eq(modelCalibration.model, "jumpy"));
    const misses = (row?.classFit as { misses?: unknown } | null)?.misses;
    expect(Array.isArray(misses) && misses.length).toBe(9);
    // Read back from the row (this process's copy is taken as fresh for 30 s only).
    const later = Date.now() + 60_000;
    vi.spyOn(Date, "now").mockReturnValue(later);
    try {
      expect(countNoise(await getCalibration(db, "fake", "jumpy"))).toBeGreaterThan(0.1);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it("counts every one of many samples recorded at once", async () => {
    const { db } = use();
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        recordCalibrationSample(db, "fake", "at-once", sample(1_100 + i)),
      ),
    );
    expect((await getCalibration(db, "fake", "at-once"))?.samples).toBe(12);
  });

  it("writes samples that arrive during a write together, in one more write", async () => {
    const { db } = use();
    // Every UPDATE of the model's row, counted by the database itself.
    await db.execute(sql`create table calibration_writes (model text)`);
    await db.execute(sql`
      create function note_calibration_write() returns trigger language plpgsql as $$
      begin insert into calibration_writes values (new.model); return new; end $$`);
    await db.execute(sql`
      create trigger calibration_written after update on model_calibration
      for each row execute function note_calibration_write()`);

    const written = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        recordCalibrationSample(db, "fake", "batched", sample(1_100 + i)),
      ),
    );
    const [writes] = await queryRows<{ count: number }>(
      db,
      sql`select count(*)::int as count from calibration_writes where model = 'batched'`,
    );
    // The first sample's write, then the eleven that queued behind it.
    expect(writes?.count).toBe(2);
    expect(written.map((calibration) => calibration.samples)).toEqual([1, ...Array(11).fill(12)]);
    expect((await getCalibration(db, "fake", "batched"))?.samples).toBe(12);
  });

  it("builds on a row another instance wrote since, instead of overwriting it", async () => {
    const { db } = use();
    await recordCalibrationSample(db, "fake", "shared", sample(1_200));
    await recordCalibrationSample(db, "fake", "shared", sample(1_200));
    // Another instance's writes: more samples, another ratio.
    await db
      .update(modelCalibration)
      .set({ samples: 40, ratio: 2 })
      .where(eq(modelCalibration.model, "shared"));

    const next = await recordCalibrationSample(db, "fake", "shared", sample(1_200));
    expect(next.samples).toBe(41);
    const stored = await getCalibration(db, "fake", "shared");
    expect(stored?.samples).toBe(41);
  });
});
