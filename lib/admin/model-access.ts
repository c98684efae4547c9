/** The allow-list's admin side (DESIGN §16): what it says, and its one writer. */
import { providerRegistry } from "@/lib/ai/providers";
import type { Db } from "@/lib/db/client";
import {
  loadModelAccessRows,
  setModelAllowed,
  setProviderRestricted,
} from "@/lib/db/queries/model-access";
import { AppError } from "@/lib/errors";
import type { ModelAccessInput, ModelAccessView } from "./model-access-input";

export async function describeModelAccess(db: Db): Promise<ModelAccessView> {
  const rows = await loadModelAccessRows(db);
  return {
    restrictedProviders: rows.restrictedProviders.sort(),
    allowedModelIds: rows.allowed.map((row) => `${row.provider}:${row.model}`).sort(),
  };
}

export async function saveModelAccess(
  db: Db,
  input: ModelAccessInput,
  updatedBy: string,
): Promise<ModelAccessView> {
  if (!providerRegistry().providers.some((p) => p.id === input.provider)) {
    throw new AppError("bad_request:provider", `Provider "${input.provider}" is not configured.`);
  }
  if ("restricted" in input) {
    await setProviderRestricted(db, input.provider, input.restricted, updatedBy);
  } else {
    await setModelAllowed(db, input.provider, input.model, input.allowed, updatedBy);
  }
  return describeModelAccess(db);
}
