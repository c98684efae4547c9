import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../client";
import { modelObservedWindow } from "../schema";

/**
 * Windows servers revealed by cutting prompts silently (issue 15), one row per model: the
 * latest observation replaces the earlier one. Whoever writes or deletes a row also evicts the
 * model's cached window (`evictContextWindow`), so the next request uses it.
 */
export type ObservedWindow = typeof modelObservedWindow.$inferSelect;

export type ObservedWindowInput = Omit<typeof modelObservedWindow.$inferInsert, "observedAt">;

export async function getObservedWindow(
  db: Db,
  provider: string,
  model: string,
): Promise<ObservedWindow | null> {
  const [row] = await db
    .select()
    .from(modelObservedWindow)
    .where(and(eq(modelObservedWindow.provider, provider), eq(modelObservedWindow.model, model)));
  return row ?? null;
}

export async function listObservedWindows(db: Db): Promise<ObservedWindow[]> {
  return db
    .select()
    .from(modelObservedWindow)
    .orderBy(asc(modelObservedWindow.provider), asc(modelObservedWindow.model));
}

export async function recordObservedWindow(
  db: Db,
  input: ObservedWindowInput,
): Promise<ObservedWindow> {
  const values = {
    contextWindow: input.contextWindow,
    sentTokens: input.sentTokens,
    chainWindow: input.chainWindow,
    chainSource: input.chainSource,
    chatId: input.chatId ?? null,
    observedAt: new Date(),
  };
  const [row] = await db
    .insert(modelObservedWindow)
    .values({ provider: input.provider, model: input.model, ...values })
    .onConflictDoUpdate({
      target: [modelObservedWindow.provider, modelObservedWindow.model],
      set: values,
    })
    .returning();
  if (!row) throw new Error("upsert into model_observed_window returned no row");
  return row;
}

/** True when a row was deleted. */
export async function deleteObservedWindow(
  db: Db,
  provider: string,
  model: string,
): Promise<boolean> {
  const rows = await db
    .delete(modelObservedWindow)
    .where(and(eq(modelObservedWindow.provider, provider), eq(modelObservedWindow.model, model)))
    .returning({ provider: modelObservedWindow.provider });
  return rows.length > 0;
}
