import { expect, it } from "vitest";
import { COLD_CLASS_RATIOS, EARLIER_CLASS_LISTS } from "@/lib/context/calibration";
import { CONTENT_CLASSES, type ContentClass, emptyClassTokens } from "@/lib/context/content-class";
import { getCalibration, recordCalibrationSample } from "@/lib/db/queries/calibration";
import { modelCalibration } from "@/lib/db/schema";
import { describeEachDriver } from "../../helpers/databases";

/** A fit stored under the class list before writing systems were split (eight classes). */
const OLD_CLASSES = ["prose", "code", "json", "cjk", "digits", "script", "indic", "frame"];
const oldFit = {
  ratios: Object.fromEntries(OLD_CLASSES.map((c, i) => [c, 1 + i / 10])),
  covariance: new Array<number>(OLD_CLASSES.length ** 2).fill(0.01),
};

describeEachDriver("a stored class fit for another class list", (use) => {
  it("reads as cold, keeps the overall ratio, and the next sample stores a whole new fit", async () => {
    const { db } = use();
    await db.insert(modelCalibration).values({
      provider: "fake",
      model: "old-classes",
      ratio: 1.3,
      samples: 12,
      classFit: oldFit,
    });

    const stored = await getCalibration(db, "fake", "old-classes");
    expect(stored?.classFit).toBeNull();
    expect(stored?.ratio).toBe(1.3);
    expect(stored?.samples).toBe(12);

    const raw = { ...emptyClassTokens(), cyrillic: 900, prose: 300, frame: 40 };
    const next = await recordCalibrationSample(db, "fake", "old-classes", {
      realTokens: 1_500,
      raw,
    });
    expect(next.samples).toBe(13);
    const reread = await getCalibration(db, "fake", "old-classes");
    const fit = reread?.classFit;
    if (!fit) throw new Error("expected the new per-class fit to be stored");
    expect(Object.keys(fit.ratios).sort()).toEqual([...CONTENT_CLASSES].sort());
    expect(fit.covariance).toHaveLength(CONTENT_CLASSES.length ** 2);
    // It started from the cold priors, not from the old ratios stored under other names.
    expect(fit.ratios.cyrillic).toBeLessThan(COLD_CLASS_RATIOS.cyrillic);
    expect(fit.ratios.code).not.toBe(oldFit.ratios.code);
  });

  it("carries a fit stored under the previous class list over, class by class", async () => {
    const { db } = use();
    const previous = EARLIER_CLASS_LISTS[0] ?? [];
    const m = previous.length;
    const covariance = new Array<number>(m * m).fill(0.001);
    for (let i = 0; i < m; i++) covariance[i * m + i] = 0.0004;
    const ratios = Object.fromEntries(previous.map((c) => [c, 1.5]));
    ratios.cyrillic = 1.77;
    ratios.arabic = 2.64;
    await db.insert(modelCalibration).values({
      provider: "fake",
      model: "previous-classes",
      ratio: 1.2,
      samples: 40,
      classFit: { ratios, covariance },
    });

    const fit = (await getCalibration(db, "fake", "previous-classes"))?.classFit;
    if (!fit) throw new Error("expected the previous fit to be carried over");
    // Writing systems keep what forty turns taught; the new classes start from the prior.
    expect(fit.ratios.cyrillic).toBe(1.77);
    expect(fit.ratios.arabic).toBe(2.64);
    expect(fit.ratios.digits3).toBeLessThan(COLD_CLASS_RATIOS.digits3);
    expect(fit.covariance).toHaveLength(CONTENT_CLASSES.length ** 2);
    const n = CONTENT_CLASSES.length;
    const at = (a: ContentClass, b: ContentClass) =>
      fit.covariance[CONTENT_CLASSES.indexOf(a) * n + CONTENT_CLASSES.indexOf(b)];
    expect(at("cyrillic", "arabic")).toBe(0.001);
    expect(at("cyrillic", "call")).toBe(0);

    // And it keeps learning from there.
    const raw = { ...emptyClassTokens(), cyrillic: 900, prose: 300, frame: 40 };
    const next = await recordCalibrationSample(db, "fake", "previous-classes", {
      realTokens: Math.round(900 * 1.77 + 300 * 1.5 + 40 * 1.5),
      raw,
    });
    expect(next.samples).toBe(41);
    expect(next.classFit?.ratios.cyrillic).toBeCloseTo(1.77, 1);
  });
});
