import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import {
  COLD_CLASS_RATIOS,
  classRatios,
  EARLIER_CLASS_LISTS,
  PRIOR_CLASS_RATIOS,
} from "@/lib/context/calibration";
import { PROBE_RATIOS, PROBE_UNIT_DENSITY, PROBED_FAMILIES } from "@/lib/context/class-priors";
import {
  CONTENT_CLASSES,
  emptyClassTokens,
  FIT_MEASURES,
  type FitMeasure,
} from "@/lib/context/content-class";
import { applyRatio } from "@/lib/context/tokens";
import type { Database } from "@/lib/db/client";
import {
  getCalibration,
  listCalibrations,
  packCovariance,
  recordCalibrationSample,
} from "@/lib/db/queries/calibration";
import { modelCalibration } from "@/lib/db/schema";
import { describeEachDriver } from "../../helpers/databases";

/** The classes of a request's own framing and the instructions', apart from `frame` since. */
const REQUEST_FRAMES: readonly string[] = ["requestFrame", "systemFrame"];

/** A fit stored under the class list before writing systems were split (eight classes). */
const OLD_CLASSES = ["prose", "code", "json", "cjk", "digits", "script", "indic", "frame"];
const oldFit = {
  ratios: Object.fromEntries(OLD_CLASSES.map((c, i) => [c, 1 + i / 10])),
  covariance: new Array<number>(OLD_CLASSES.length ** 2).fill(0.01),
};

/**
 * A fit as an earlier class list stored it: every class at `ratio` except `overrides`, each
 * class's variance 0.0004 and every pair's covariance 0.001.
 */
function earlierFit(classes: readonly string[], ratio: number, overrides: Record<string, number>) {
  const m = classes.length;
  const covariance = new Array<number>(m * m).fill(0.001);
  for (let i = 0; i < m; i++) covariance[i * m + i] = 0.0004;
  return {
    ratios: { ...Object.fromEntries(classes.map((c) => [c, ratio])), ...overrides },
    covariance,
  };
}

/** The carried fit's covariance between two measures. */
function covarianceOf(fit: { covariance: readonly number[] }) {
  const n = FIT_MEASURES.length;
  return (a: FitMeasure, b: FitMeasure) =>
    fit.covariance[FIT_MEASURES.indexOf(a) * n + FIT_MEASURES.indexOf(b)];
}

/**
 * Stores a calibration of fake:`model` as an earlier release left it, and reads its class fit
 * back as this one does.
 */
async function storedAndReread(
  db: Database["db"],
  model: string,
  row: Pick<typeof modelCalibration.$inferInsert, "ratio" | "samples" | "classFit">,
) {
  await db.insert(modelCalibration).values({ provider: "fake", model, ...row });
  const fit = (await getCalibration(db, "fake", model))?.classFit;
  if (!fit) throw new Error("expected the stored fit to be carried over");
  return fit;
}

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
    expect(Object.keys(fit.ratios).sort()).toEqual([...FIT_MEASURES].sort());
    expect(fit.covariance).toHaveLength(FIT_MEASURES.length ** 2);
    // It started from the cold priors, not from the old ratios stored under other names.
    expect(fit.ratios.cyrillic).toBeLessThan(COLD_CLASS_RATIOS.cyrillic);
    expect(fit.ratios.code).not.toBe(oldFit.ratios.code);
  });

  it("carries a fit stored before a request's own framing was a class over: the other measures keep theirs, the request's and the instructions' framing start from the prior", async () => {
    const { db } = use();
    const previous = EARLIER_CLASS_LISTS[0] ?? [];
    expect(previous).toEqual(FIT_MEASURES.filter((m) => !REQUEST_FRAMES.includes(m)));
    const fit = await storedAndReread(db, "before-request-frames", {
      ratio: 1.2,
      samples: 30,
      classFit: earlierFit(previous, 1.2, { frame: 0.4, hanLetters: 0.3, han: 1.36 }),
    });
    expect(fit.ratios.frame).toBe(0.4);
    expect(fit.ratios.han).toBe(1.36);
    expect(fit.ratios.hanLetters).toBe(0.3);
    expect(fit.ratios.requestFrame).toBe(PRIOR_CLASS_RATIOS.requestFrame);
    expect(fit.ratios.systemFrame).toBe(PRIOR_CLASS_RATIOS.systemFrame);
    const at = covarianceOf(fit);
    expect(at("han", "frame")).toBe(0.001);
    expect(at("frame", "requestFrame")).toBe(0);

    // And it keeps learning from there: a turn's framing is priced as the stored fit priced it.
    const raw = { ...emptyClassTokens(), han: 900, hanLetters: 900 * PROBE_UNIT_DENSITY.han[0] };
    const framed = { ...raw, frame: 40, requestFrame: 3, systemFrame: 4 };
    const next = await recordCalibrationSample(db, "fake", "before-request-frames", {
      realTokens: Math.round(900 * 1.36 + 47 * 0.4),
      raw: framed,
    });
    expect(next.samples).toBe(31);
    expect(next.classFit?.ratios.han).toBeCloseTo(1.36, 1);
  });

  it("carries what a fit stored before a request's own framing was a class knew of the families: their weights, coefficients, settled classes and misses", async () => {
    const { db } = use();
    const previous = EARLIER_CLASS_LISTS[0] ?? [];
    const stored = earlierFit(previous, 1.1, { han: 1.3 });
    // It had found the model prices like Gemma (the fourth family), and learned Gemma's Chinese.
    const logWeights = [
      Math.log(0.05),
      ...PROBED_FAMILIES.map((f) => Math.log(f === "gemma3" ? 0.9 : 0.0125)),
    ];
    const familyRatios = PROBED_FAMILIES.map((_, f) =>
      Object.fromEntries(previous.map((c) => [c, c === "han" ? 0.8 + f / 100 : 1 + f / 100])),
    );
    const fit = await storedAndReread(db, "weighed-before-request-frames", {
      ratio: 1.1,
      samples: 40,
      classFit: {
        ...stored,
        open: stored.ratios,
        families: { logWeights, ratios: familyRatios, covariance: stored.covariance },
        settled: { han: 1, prose: 0.5 },
        misses: [0.01, 0.02, 0.015],
      },
    });
    if (!fit.families) throw new Error("expected the families to be carried over");
    expect(fit.families.logWeights).toEqual(logWeights);
    const gemma = PROBED_FAMILIES.indexOf("gemma3");
    expect(fit.families.ratios[gemma]?.han).toBeCloseTo(0.83, 9);
    // A class new to this list starts at the family's own probe.
    expect(fit.families.ratios[gemma]?.requestFrame).toBe(PROBE_RATIOS.requestFrame[gemma]);
    expect(fit.settled).toEqual({ han: 1, prose: 0.5 });
    expect(fit.misses).toEqual([0.01, 0.02, 0.015]);
    // The estimate still leans on Gemma: its Chinese is near Gemma's learned 0.83, not the
    // open fit's 1.3.
    expect(fit.ratios.han).toBeLessThan(0.9);
  });

  it("carries a fit stored before Devanagari was a class over: the other classes keep theirs, Devanagari starts from the prior", async () => {
    const { db } = use();
    const previous = EARLIER_CLASS_LISTS[1] ?? [];
    expect(previous).toEqual(
      FIT_MEASURES.filter((m) => !m.startsWith("devanagari") && !REQUEST_FRAMES.includes(m)),
    );
    const fit = await storedAndReread(db, "before-devanagari", {
      ratio: 1.2,
      samples: 30,
      classFit: earlierFit(previous, 1.2, { indic: 3.4, indicLetters: 0.9, han: 1.36 }),
    });
    expect(fit.ratios.indic).toBe(3.4);
    expect(fit.ratios.indicLetters).toBe(0.9);
    expect(fit.ratios.han).toBe(1.36);
    expect(fit.ratios.devanagari).toBe(PRIOR_CLASS_RATIOS.devanagari);
    expect(fit.ratios.devanagariLetters).toBe(PRIOR_CLASS_RATIOS.devanagariLetters);
    const at = covarianceOf(fit);
    expect(at("han", "indic")).toBe(0.001);
    expect(at("devanagari", "indic")).toBe(0);
  });

  it("carries a fit stored before letters were weighed over: classes keep theirs, letters start from the prior", async () => {
    const { db } = use();
    const previous = EARLIER_CLASS_LISTS[2] ?? [];
    expect(previous).toEqual(
      CONTENT_CLASSES.filter((c) => c !== "devanagari" && !REQUEST_FRAMES.includes(c)),
    );
    const fit = await storedAndReread(db, "before-letters", {
      ratio: 1.2,
      samples: 30,
      classFit: earlierFit(previous, 1.2, { han: 1.36 }),
    });
    expect(fit.ratios.han).toBe(1.36);
    expect(fit.ratios.hanLetters).toBe(PRIOR_CLASS_RATIOS.hanLetters);
    expect(fit.covariance).toHaveLength(FIT_MEASURES.length ** 2);
    const at = covarianceOf(fit);
    expect(at("han", "kana")).toBe(0.001);
    expect(at("han", "hanLetters")).toBe(0);
    // Text at the usual density costs what the stored fit learned.
    const raw = {
      ...emptyClassTokens(),
      han: 1_000,
      hanLetters: 1_000 * PROBE_UNIT_DENSITY.han[0],
    };
    expect(applyRatio(raw, classRatios({ ratio: 1.2, samples: 30, classFit: fit }))).toBeCloseTo(
      1_360,
      -1,
    );
  });

  it("carries a fit stored under the list before digit groups and tool calls, class by class", async () => {
    const { db } = use();
    const previous = EARLIER_CLASS_LISTS[3] ?? [];
    const fit = await storedAndReread(db, "previous-classes", {
      ratio: 1.2,
      samples: 40,
      classFit: earlierFit(previous, 1.5, { cyrillic: 1.77, arabic: 2.64 }),
    });
    // Writing systems keep what forty turns taught; the new classes start from the prior.
    expect(fit.ratios.cyrillic).toBe(1.77);
    expect(fit.ratios.arabic).toBe(2.64);
    expect(fit.ratios.digits3).toBeLessThan(COLD_CLASS_RATIOS.digits3);
    expect(fit.covariance).toHaveLength(FIT_MEASURES.length ** 2);
    const at = covarianceOf(fit);
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

  it("carries a fit stored before the families were weighed, and stores and rereads theirs", async () => {
    const { db } = use();
    const n = FIT_MEASURES.length;
    const covariance = new Array<number>(n * n).fill(0.0001);
    for (let i = 0; i < n; i++) covariance[i * n + i] = 0.0004;
    const ratios = { ...PRIOR_CLASS_RATIOS, cyrillic: 1.77, han: 1.36 };
    await db.insert(modelCalibration).values({
      provider: "fake",
      model: "before-families",
      ratio: 1.2,
      samples: 30,
      classFit: { ratios, covariance },
    });

    const fit = (await getCalibration(db, "fake", "before-families"))?.classFit;
    if (!fit) throw new Error("expected the stored fit to load");
    expect(fit.ratios).toEqual(ratios);
    expect(fit.families).toBeUndefined();

    const raw = {
      ...emptyClassTokens(),
      cyrillic: 900,
      cyrillicLetters: 900 * PROBE_UNIT_DENSITY.cyrillic[0],
      prose: 300,
      frame: 40,
    };
    const next = await recordCalibrationSample(db, "fake", "before-families", {
      realTokens: Math.round(900 * 1.77 + 300 * ratios.prose + 40 * ratios.frame),
      raw,
    });
    // What thirty turns taught stays in charge; the families start beside it.
    expect(next.classFit?.ratios.cyrillic).toBeCloseTo(1.77, 1);
    expect(next.classFit?.ratios.han).toBeCloseTo(1.36, 1);
    const reread = (await getCalibration(db, "fake", "before-families"))?.classFit;
    expect(reread?.families?.ratios).toHaveLength(PROBED_FAMILIES.length);
    expect(reread?.families?.logWeights).toHaveLength(PROBED_FAMILIES.length + 1);
    expect(reread).toEqual(next.classFit);
  });

  it("stores its covariances packed and reads them back exactly", async () => {
    const { db } = use();
    const raw = { ...emptyClassTokens(), han: 700, prose: 300, frame: 40 };
    const next = await recordCalibrationSample(db, "fake", "packed", { realTokens: 1_400, raw });

    const [row] = await db
      .select({ classFit: modelCalibration.classFit })
      .from(modelCalibration)
      .where(eq(modelCalibration.model, "packed"));
    const stored = row?.classFit as { covariance: unknown; families: { covariance: unknown } };
    expect(stored.covariance).toBe(packCovariance(next.classFit?.covariance ?? []));
    expect(typeof stored.families.covariance).toBe("string");
    // Read from the row itself (getCalibration would answer from this process's copy).
    const reread = (await listCalibrations(db)).find((c) => c.model === "packed");
    expect(reread?.classFit).toEqual(next.classFit);
  });

  it("stores only the upper triangle of each covariance, and a whole matrix stored before still reads", async () => {
    const { db } = use();
    const n = FIT_MEASURES.length;
    const raw = { ...emptyClassTokens(), code: 500, json: 400, prose: 300, frame: 40 };
    let next = await recordCalibrationSample(db, "fake", "triangle", { realTokens: 1_500, raw });
    for (const realTokens of [1_430, 1_610, 1_520])
      next = await recordCalibrationSample(db, "fake", "triangle", { realTokens, raw });

    const [row] = await db
      .select({ classFit: modelCalibration.classFit })
      .from(modelCalibration)
      .where(eq(modelCalibration.model, "triangle"));
    const stored = row?.classFit as { covariance: string; families: { covariance: string } };
    const doubles = (packed: string) => Buffer.from(packed.slice(2), "base64").length / 8;
    for (const packed of [stored.covariance, stored.families.covariance]) {
      expect(packed.startsWith("u:")).toBe(true);
      expect(doubles(packed)).toBe((n * (n + 1)) / 2);
    }
    const reread = (await listCalibrations(db)).find((c) => c.model === "triangle");
    expect(reread?.classFit).toEqual(next.classFit);

    // The same fit as rows written before held it: each matrix whole, packed without a mark.
    const whole = (values: readonly number[]) => {
      const bytes = Buffer.alloc(values.length * 8);
      values.forEach((value, i) => {
        bytes.writeDoubleLE(value, i * 8);
      });
      return bytes.toString("base64");
    };
    const fit = next.classFit;
    if (!fit?.families) throw new Error("the fit has no families");
    await db.insert(modelCalibration).values({
      provider: "fake",
      model: "whole-matrix",
      ratio: next.ratio,
      samples: next.samples,
      classFit: {
        ...fit,
        covariance: whole(fit.covariance),
        families: { ...fit.families, covariance: whole(fit.families.covariance) },
      },
    });
    const earlier = (await listCalibrations(db)).find((c) => c.model === "whole-matrix");
    expect(earlier?.classFit).toEqual(fit);
  });

  it("reads a packed covariance of the wrong size as cold", async () => {
    const { db } = use();
    const n = FIT_MEASURES.length;
    await db.insert(modelCalibration).values({
      provider: "fake",
      model: "packed-short",
      ratio: 1.2,
      samples: 3,
      classFit: {
        ratios: PRIOR_CLASS_RATIOS,
        covariance: packCovariance(new Array<number>(n * n - 1).fill(0.0004)),
      },
    });
    const stored = (await listCalibrations(db)).find((c) => c.model === "packed-short");
    expect(stored?.classFit).toBeNull();
    expect(stored?.ratio).toBe(1.2);
  });
});
