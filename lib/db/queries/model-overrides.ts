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

/** The row of provider+model. */
const rowOf = (provider: string, model: string) =>
  and(eq(modelOverride.provider, provider), eq(modelOverride.model, model));

/** What a save writes: its numbers (one left out is null), who saved it, and when. */
const savedValues = (input: ModelOverrideInput) => ({
  contextWindow: input.contextWindow ?? null,
  maxOutputTokens: input.maxOutputTokens ?? null,
  updatedBy: input.updatedBy ?? null,
  updatedAt: new Date(),
});

export async function getOverride(
  db: Db,
  provider: string,
  model: string,
): Promise<ModelOverride | null> {
  const [row] = await db.select().from(modelOverride).where(rowOf(provider, model));
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
  const values = savedValues(input);
  const [row] = await db
    .insert(modelOverride)
    .values({ provider: input.provider, model: input.model, ...values })
    .onConflictDoUpdate({ target: [modelOverride.provider, modelOverride.model], set: values })
    .returning();
  if (!row) throw new Error("upsert into model_override returned no row");
  return row;
}

/**
 * Writes the row of provider+model only if it is still the one an editor began from: the row
 * updated at `from`, or (null) no row. Null when it is another now.
 */
export async function replaceOverrideIfUnchanged(
  db: Db,
  input: ModelOverrideInput,
  from: Date | null,
): Promise<ModelOverride | null> {
  const values = savedValues(input);
  if (from === null) {
    const [row] = await db
      .insert(modelOverride)
      .values({ provider: input.provider, model: input.model, ...values })
      .onConflictDoNothing()
      .returning();
    return row ?? null;
  }
  const [row] = await db
    .update(modelOverride)
    .set(values)
    .where(and(rowOf(input.provider, input.model), eq(modelOverride.updatedAt, from)))
    .returning();
  return row ?? null;
}

/**
 * Clears the row of provider+model only if it is still the one an editor began from (updated at
 * `from`; null: there was none). False when another is there now; a row already gone is cleared.
 */
export async function deleteOverrideIfUnchanged(
  db: Db,
  provider: string,
  model: string,
  from: Date | null,
): Promise<boolean> {
  if (from !== null) {
    const [deleted] = await db
      .delete(modelOverride)
      .where(and(rowOf(provider, model), eq(modelOverride.updatedAt, from)))
      .returning({ provider: modelOverride.provider });
    if (deleted) return true;
  }
  return (await getOverride(db, provider, model)) === null;
}

/** True when a row was deleted. */
export async function deleteOverride(db: Db, provider: string, model: string): Promise<boolean> {
  const rows = await db
    .delete(modelOverride)
    .where(rowOf(provider, model))
    .returning({ provider: modelOverride.provider });
  return rows.length > 0;
}
