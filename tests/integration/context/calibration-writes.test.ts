import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { emptyClassTokens } from "@/lib/context/content-class";
import { getCalibration, recordCalibrationSample } from "@/lib/db/queries/calibration";
import { modelCalibration } from "@/lib/db/schema";
import { describeEachDriver } from "../../helpers/databases";

const sample = (realTokens: number) => ({
  realTokens,
  raw: { ...emptyClassTokens(), prose: 1_000, frame: 40 },
});

describeEachDriver("calibration writes", (use) => {
  it("counts every one of many samples recorded at once", async () => {
    const { db } = use();
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        recordCalibrationSample(db, "fake", "at-once", sample(1_100 + i)),
      ),
    );
    expect((await getCalibration(db, "fake", "at-once"))?.samples).toBe(12);
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
