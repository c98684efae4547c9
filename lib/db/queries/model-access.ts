import { and, eq } from "drizzle-orm";
import type { Db } from "../client";
import { allowedModel, providerAccess } from "../schema";

/** Providers restricted to their allowed models, and those models. */
export type ModelAccessRows = {
  restrictedProviders: string[];
  allowed: Array<{ provider: string; model: string }>;
};

export async function loadModelAccessRows(db: Db): Promise<ModelAccessRows> {
  const [providers, allowed] = await Promise.all([
    db
      .select({ provider: providerAccess.provider })
      .from(providerAccess)
      .where(eq(providerAccess.restricted, true)),
    db.select({ provider: allowedModel.provider, model: allowedModel.model }).from(allowedModel),
  ]);
  return { restrictedProviders: providers.map((p) => p.provider), allowed };
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
