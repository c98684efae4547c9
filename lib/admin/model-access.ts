/** The allow-list's admin side (DESIGN §16): what it says, and its one writer. */
import { listModels, listModelsOf, modelListUnknown, providerRegistry } from "@/lib/ai/providers";
import type { Db } from "@/lib/db/client";
import {
  allowModels,
  loadModelAccessRows,
  lockModelAccess,
  setModelAllowed,
  setProviderRestricted,
} from "@/lib/db/queries/model-access";
import { AppError } from "@/lib/errors";
import { isModelAllowed, loadModelAccess, type ModelAccess } from "@/lib/limits/model-access";
import type { ModelAccessInput, ModelAccessView } from "./model-access-input";

export async function describeModelAccess(db: Db): Promise<ModelAccessView> {
  const rows = await loadModelAccessRows(db);
  return {
    restrictedProviders: rows.restrictedProviders.sort(),
    allowedModelIds: rows.allowed.map((row) => `${row.provider}:${row.model}`).sort(),
  };
}

/**
 * Applies one change to the allow-list. Restricting a provider none of whose listed models is
 * allowed yet allows all of them: ticking the box takes nothing away from users at once, the
 * admin then unticks what they may not use (a provider restricted before keeps its old ticks).
 * A change that would leave users no model at all is refused (409): every chat would fail.
 */
export async function saveModelAccess(
  db: Db,
  input: ModelAccessInput,
  updatedBy: string,
): Promise<ModelAccessView> {
  if (!providerRegistry().providers.some((p) => p.id === input.provider)) {
    throw new AppError("bad_request:provider", `Provider "${input.provider}" is not configured.`);
  }
  // The providers are asked before the transaction (seconds at most), not while it holds the lock.
  const [models, listed] = await Promise.all([listModels(), listModelsOf(input.provider)]);
  if ("restricted" in input && input.restricted && modelListUnknown(input.provider)) {
    throw new AppError(
      "unavailable:model",
      `"${input.provider}" is not answering for its list of models, so nothing could be allowed on it. Try again in a moment.`,
    );
  }
  await db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    await lockModelAccess(tx);
    const before = await loadModelAccess(tx);
    if ("restricted" in input) {
      await setProviderRestricted(tx, input.provider, input.restricted, updatedBy);
      // Only a provider restricted just now: one restricted already whose ticks were all taken
      // away stays as the admin left it.
      const newlyRestricted = !before.restricted.has(input.provider);
      if (input.restricted && newlyRestricted && !listed.some((m) => before.allowed.has(m.id))) {
        await allowModels(
          tx,
          input.provider,
          listed.map((m) => m.model),
          updatedBy,
        );
      }
    } else {
      await setModelAllowed(tx, input.provider, input.model, input.allowed, updatedBy);
    }
    const after = await loadModelAccess(tx);
    if (anyAllowed(models, before) && !anyAllowed(models, after)) {
      // Thrown inside the transaction: the change rolls back.
      throw new AppError(
        "conflict:last_model",
        "That would leave users no model to chat with among the providers answering now. Allow another model first, or lift the restriction.",
      );
    }
  });
  return describeModelAccess(db);
}

/**
 * Whether users have a model left among those listed now: a provider that did not answer for its
 * list offers none they could start a chat with until it does.
 */
function anyAllowed(models: readonly { provider: string; model: string }[], access: ModelAccess) {
  return models.some((m) => isModelAllowed(access, m.provider, m.model));
}
