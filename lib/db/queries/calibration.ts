import { and, eq, sql } from "drizzle-orm";
import { CALIBRATION_EMA_ALPHA, type Calibration } from "@/lib/context/calibration";
import type { Db } from "../client";
import { modelCalibration } from "../schema";

export async function getCalibration(
  db: Db,
  provider: string,
  model: string,
): Promise<Calibration | null> {
  const [row] = await db
    .select({ ratio: modelCalibration.ratio, samples: modelCalibration.samples })
    .from(modelCalibration)
    .where(and(eq(modelCalibration.provider, provider), eq(modelCalibration.model, model)));
  return row ?? null;
}

export async function listCalibrations(db: Db) {
  return db.select().from(modelCalibration);
}

/**
 * Folds one sample into the model's ratio in a single statement, so two turns
 * finishing at once both count (the same rule as `nextCalibration`).
 */
export async function recordCalibrationSample(
  db: Db,
  provider: string,
  model: string,
  sample: number,
): Promise<Calibration> {
  const [row] = await db
    .insert(modelCalibration)
    .values({ provider, model, ratio: sample, samples: 1 })
    .onConflictDoUpdate({
      target: [modelCalibration.provider, modelCalibration.model],
      set: {
        ratio: sql`case when ${modelCalibration.samples} = 0 then ${sample}
          else ${modelCalibration.ratio} + ${CALIBRATION_EMA_ALPHA} * (${sample} - ${modelCalibration.ratio}) end`,
        samples: sql`${modelCalibration.samples} + 1`,
        updatedAt: new Date(),
      },
    })
    .returning({ ratio: modelCalibration.ratio, samples: modelCalibration.samples });
  if (!row) throw new Error("calibration upsert returned no row");
  return row;
}
