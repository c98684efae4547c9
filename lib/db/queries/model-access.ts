import { and, eq, sql } from "drizzle-orm";
import { unionAll } from "drizzle-orm/pg-core";
import type { Db } from "../client";
import { prepared } from "../prepared";
import { allowedModel, providerAccess } from "../schema";

/** Serializes changes to the allow-list, so two admins cannot each take away the last model. */
const MODEL_ACCESS_LOCK_KEY = 7_424_003;

/** Providers restricted to their allowed models, and those models. */
export type ModelAccessRows = {
  restrictedProviders: string[];
  allowed: Array<{ provider: string; model: string }>;
};

/** Both lists in one round trip: restricted providers come back with a null model. */
export async function loadModelAccessRows(db: Db): Promise<ModelAccessRows> {
  const query = prepared(db, "model_access", (on, name) =>
    unionAll(
      on
        .select({ provider: providerAccess.provider, model: sql<string | null>`null` })
        .from(providerAccess)
        .where(eq(providerAccess.restricted, true)),
      on.select({ provider: allowedModel.provider, model: allowedModel.model }).from(allowedModel),
    ).prepare(name),
  );
  const rows = await query.execute();
  const restrictedProviders: string[] = [];
  const allowed: Array<{ provider: string; model: string }> = [];
  for (const { provider, model } of rows) {
    if (model === null) restrictedProviders.push(provider);
    else allowed.push({ provider, model });
  }
  return { restrictedProviders, allowed };
}

/** Takes the allow-list lock for the rest of the transaction `tx`. */
export async function lockModelAccess(tx: Db): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${MODEL_ACCESS_LOCK_KEY})`);
}

export async function setProviderRestricted(
  db: Db,
  provider: string,
  restricted: boolean,
  updatedBy: string,
): Promise<void> {
  const values = { restricted, updatedBy, updatedAt: new Date() };
  await db
    .insert(providerAccess)
    .values({ provider, ...values })
    .onConflictDoUpdate({ target: providerAccess.provider, set: values });
}

export async function setModelAllowed(
  db: Db,
  provider: string,
  model: string,
  allowed: boolean,
  updatedBy: string,
): Promise<void> {
  if (!allowed) {
    await db
      .delete(allowedModel)
      .where(and(eq(allowedModel.provider, provider), eq(allowedModel.model, model)));
    return;
  }
  await db
    .insert(allowedModel)
    .values({ provider, model, updatedBy })
    .onConflictDoNothing({ target: [allowedModel.provider, allowedModel.model] });
}

/** Allows each of `models` on `provider`; one already allowed stays as it was. */
export async function allowModels(
  db: Db,
  provider: string,
  models: readonly string[],
  updatedBy: string,
): Promise<void> {
  if (models.length === 0) return;
  await db
    .insert(allowedModel)
    .values(models.map((model) => ({ provider, model, updatedBy })))
    .onConflictDoNothing({ target: [allowedModel.provider, allowedModel.model] });
}
