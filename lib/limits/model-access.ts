/**
 * The model allow-list (DESIGN §16): per provider, either every model it lists or only those an
 * admin allowed. Users see, pick and use only allowed models; a model id that is unknown or not
 * allowed is refused with a 400 before anything is saved.
 */
import {
  defaultModelId,
  listModels,
  listModelsOf,
  type ModelInfo,
  modelListUnknown,
  parseModelId,
} from "@/lib/ai/providers";
import { MODEL_LIST_RETRY_MS } from "@/lib/ai/remote-models";
import type { Db } from "@/lib/db/client";
import { loadModelAccessRows } from "@/lib/db/queries/model-access";
import { AppError } from "@/lib/errors";

export type ModelAccess = {
  /** Providers whose models need an explicit allow. */
  restricted: ReadonlySet<string>;
  /** `provider:model` ids allowed on restricted providers. */
  allowed: ReadonlySet<string>;
};

export async function loadModelAccess(db: Db): Promise<ModelAccess> {
  const rows = await loadModelAccessRows(db);
  return {
    restricted: new Set(rows.restrictedProviders),
    allowed: new Set(rows.allowed.map((row) => `${row.provider}:${row.model}`)),
  };
}

export function isModelAllowed(access: ModelAccess, provider: string, model: string): boolean {
  return !access.restricted.has(provider) || access.allowed.has(`${provider}:${model}`);
}

/** The models users may pick, in the registry's order. */
export async function allowedModels(
  db: Db,
  options: { signal?: AbortSignal } = {},
): Promise<ModelInfo[]> {
  const [models, access] = await Promise.all([listModels(options), loadModelAccess(db)]);
  return models.filter((m) => isModelAllowed(access, m.provider, m.model));
}

/**
 * Refuses (400 `bad_request:model`) a model id no configured provider lists right now, or one
 * the allow-list leaves out, so it is neither used nor saved on a chat.
 */
export async function assertModelAllowed(db: Db, modelId: string): Promise<void> {
  const [parsed, access] = await Promise.all([assertModelListed(modelId), loadModelAccess(db)]);
  if (!isModelAllowed(access, parsed.provider, parsed.model)) throw modelNotAllowed(modelId);
}

/**
 * The first half of `assertModelAllowed`, for callers that check the allow-list in a
 * statement of their own: 400 unless a configured provider lists the model right now.
 */
export async function assertModelListed(
  modelId: string,
): Promise<{ provider: string; model: string }> {
  const parsed = parseModelId(modelId);
  if (!parsed) {
    throw new AppError("bad_request:model", `Unknown model "${modelId}": expected provider:model.`);
  }
  // Its own provider's list only: another provider that does not answer is no reason to wait.
  const models = await listModelsOf(parsed.provider);
  if (!models.some((m) => m.id === modelId)) {
    // Its provider did not answer for its list: the model may well exist; nothing is wrong
    // with the request.
    if (modelListUnknown(parsed.provider)) {
      throw new AppError(
        "unavailable:model",
        `"${modelId}" cannot be checked right now: its provider is not answering. Try again in a moment.`,
        { retryAfterSeconds: MODEL_LIST_RETRY_S },
      );
    }
    throw new AppError(
      "bad_request:model",
      `Unknown model "${modelId}": no configured provider offers it right now.`,
    );
  }
  return parsed;
}

/** When to ask again after a provider's list failed: when Fold asks it again. */
const MODEL_LIST_RETRY_S = Math.ceil(MODEL_LIST_RETRY_MS / 1_000);

/** The 400 for a model the allow-list leaves out. */
export function modelNotAllowed(modelId: string): AppError {
  return new AppError(
    "bad_request:model",
    `The model "${modelId}" is not available: an admin has not allowed it.`,
  );
}

/** The first allowed model (not the demo, when another is allowed); 503 when none is. */
export async function defaultAllowedModelId(
  db: Db,
  options: { signal?: AbortSignal } = {},
): Promise<string> {
  const id = defaultModelId(await allowedModels(db, options));
  if (!id) {
    throw new AppError(
      "unavailable:model",
      "No model is available: configure a provider, or ask an admin to allow a model.",
    );
  }
  return id;
}
