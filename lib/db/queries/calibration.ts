import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import {
  type Calibration,
  type CalibrationSample,
  type ClassFit,
  carriedFit,
  EARLIER_CLASS_LISTS,
  nextCalibration,
} from "@/lib/context/calibration";
import { CONTENT_CLASSES, type ContentClass } from "@/lib/context/content-class";
import type { Db } from "../client";
import { prepared } from "../prepared";
import { modelCalibration } from "../schema";

const ratio = z.number().finite();
/**
 * The stored per-class fit. One written for an earlier class list Fold knows is carried over
 * class by class (carriedFit); one for any other list (a class missing, an unknown one, a
 * covariance of another size) parses as null, so the model's classes start cold rather than
 * reading ratios under the wrong names.
 */
const classFitSchema = z
  .object({
    ratios: z.strictObject(
      Object.fromEntries(CONTENT_CLASSES.map((c) => [c, ratio])) as Record<
        ContentClass,
        typeof ratio
      >,
    ),
    covariance: z.array(z.number().finite()),
  })
  .refine((fit) => fit.covariance.length === CONTENT_CLASSES.length ** 2);

const anyFitSchema = z.object({
  ratios: z.record(z.string(), ratio),
  covariance: z.array(z.number().finite()),
});

function parseClassFit(value: unknown): ClassFit | null {
  const parsed = classFitSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const stored = anyFitSchema.safeParse(value);
  if (!stored.success) return null;
  const keys = Object.keys(stored.data.ratios);
  const earlier = EARLIER_CLASS_LISTS.find(
    (list) =>
      list.length === keys.length &&
      list.every((c) => keys.includes(c)) &&
      stored.data.covariance.length === list.length ** 2,
  );
  return earlier ? carriedFit(stored.data, earlier) : null;
}

type Row = { ratio: number; samples: number; classFit: unknown };
const toCalibration = (row: Row): Calibration & { classFit: ClassFit | null } => ({
  ratio: row.ratio,
  samples: row.samples,
  classFit: parseClassFit(row.classFit),
});

const columns = {
  ratio: modelCalibration.ratio,
  samples: modelCalibration.samples,
  classFit: modelCalibration.classFit,
};

export async function getCalibration(
  db: Db,
  provider: string,
  model: string,
): Promise<Calibration | null> {
  const query = prepared(db, "get_calibration", (on, name) =>
    on
      .select(columns)
      .from(modelCalibration)
      .where(
        and(
          eq(modelCalibration.provider, sql.placeholder("provider")),
          eq(modelCalibration.model, sql.placeholder("model")),
        ),
      )
      .prepare(name),
  );
  const [row] = await query.execute({ provider, model });
  return row ? toCalibration(row) : null;
}

export async function listCalibrations(db: Db) {
  const rows = await db.select().from(modelCalibration);
  return rows.map((row) => ({ ...row, ...toCalibration(row) }));
}

/**
 * Folds one turn's sample into the model's calibration. The row is locked for the update,
 * so two turns finishing at once both count, one after the other.
 */
export async function recordCalibrationSample(
  db: Db,
  provider: string,
  model: string,
  sample: CalibrationSample,
): Promise<Calibration> {
  const where = and(eq(modelCalibration.provider, provider), eq(modelCalibration.model, model));
  return db.transaction(async (tx) => {
    await tx
      .insert(modelCalibration)
      .values({ provider, model, ratio: 1, samples: 0 })
      .onConflictDoNothing();
    const [row] = await tx.select(columns).from(modelCalibration).where(where).for("update");
    if (!row) throw new Error("calibration row vanished inside its transaction");
    const next = nextCalibration(toCalibration(row), sample);
    await tx
      .update(modelCalibration)
      .set({
        ratio: next.ratio,
        samples: next.samples,
        classFit: next.classFit,
        updatedAt: new Date(),
      })
      .where(where);
    return next;
  });
}
