import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../client";
import { modelOverride } from "../schema";

/**
 * An admin's correction of a model's metadata (DESIGN §6, step 1). Either number may be
 * null: that one then comes from the rest of the resolution chain. Whoever writes a row
 * also evicts the model's cached window (`evictContextWindow`), so the edit applies at once.
 */
export type ModelOverride = typeof modelOverride.$inferSelect;

export type ModelOverrideInput = Pick<
  typeof modelOverride.$inferInsert,
  "provider" | "model" | "contextWindow" | "maxOutputTokens" | "updatedBy"
>;

export async function getOverride(
  db: Db,
  provider: string,
  model: string,
): Promise<ModelOverride | null> {
  const [row] = await db
    .select()
    .from(modelOverride)
    .where(and(eq(modelOverride.provider, provider), eq(modelOverride.model, model)));
  return row ?? null;
}

export async function listOverrides(db: Db): Promise<ModelOverride[]> {
  return db
    .select()
    .from(modelOverride)
    .orderBy(asc(modelOverride.provider), asc(modelOverride.model));
}

/** Creates or replaces the row of provider+model; a number left out is stored as null. */
export async function upsertOverride(db: Db, input: ModelOverrideInput): Promise<ModelOverride> {
  const values = {
    contextWindow: input.contextWindow ?? null,
    maxOutputTokens: input.maxOutputTokens ?? null,
    updatedBy: input.updatedBy ?? null,
    updatedAt: new Date(),
  };
  const [row] = await db
    .insert(modelOverride)
    .values({ provider: input.provider, model: input.model, ...values })
    .onConflictDoUpdate({ target: [modelOverride.provider, modelOverride.model], set: values })
    .returning();
  if (!row) throw new Error("upsert into model_override returned no row");
  return row;
}

/** True when a row was deleted. */
export async function deleteOverride(db: Db, provider: string, model: string): Promise<boolean> {
  const rows = await db
    .delete(modelOverride)
    .where(and(eq(modelOverride.provider, provider), eq(modelOverride.model, model)))
    .returning({ provider: modelOverride.provider });
  return rows.length > 0;
}
