/**
 * Admin → Models (DESIGN §6, §11): every model Fold can reach with the window it resolves to,
 * where that number comes from, its override and its calibration; and the one writer of
 * overrides, which evicts the cached window so the next request sees the edit.
 */
import { listModels, type ModelInfo, providerRegistry } from "@/lib/ai/providers";
import { windowTooSmall } from "@/lib/context/budget";
import { type Calibration, effectiveRatio } from "@/lib/context/calibration";
import type { Database, Db } from "@/lib/db/client";
import { getCalibration, listCalibrations } from "@/lib/db/queries/calibration";
import {
  deleteOverride,
  deleteOverrideIfUnchanged,
  getOverride,
  listOverrides,
  type ModelOverride,
  replaceOverrideIfUnchanged,
  upsertOverride,
} from "@/lib/db/queries/model-overrides";
import { deleteObservedWindow } from "@/lib/db/queries/observed-windows";
import { AppError } from "@/lib/errors";
import {
  type ContextWindow,
  evictContextWindow,
  inspectContextWindow,
  type WindowInspection,
  withObservation,
  withOverride,
} from "@/lib/model-window/window";
import { type ModelWindows, modelWindows } from "./model-windows";
import { clearsOverride, type OverrideInput } from "./override-input";

/** One row of the admin table, as GET and PUT /api/admin/models answer it. */
export type AdminModel = Omit<ModelInfo, "contextWindow" | "maxOutputTokens"> &
  ContextWindow & {
    /** False for an override of a model its provider does not list (an id typed by hand). */
    listed: boolean;
    override: {
      contextWindow: number | null;
      maxOutputTokens: number | null;
      updatedAt: string;
    } | null;
    /** The ratio estimates are multiplied by: learned, or the cold-start guess at 0 samples. */
    calibration: Calibration;
    /** Trained, loaded and observed windows side by side, with their sources (issue 15). */
    windows: ModelWindows;
  };

type Listing = Omit<AdminModel, keyof ContextWindow | "override" | "calibration" | "windows">;

export async function listAdminModels(
  db: Db,
  options: { signal?: AbortSignal } = {},
): Promise<AdminModel[]> {
  const [models, overrides, calibrations] = await Promise.all([
    listModels(options),
    listOverrides(db),
    listCalibrations(db),
  ]);
  const overrideOf = byModel(overrides);
  const calibrationOf = byModel(calibrations);
  const listings = [...models.map(listed), ...unlistedOverrides(models, overrides)];
  return Promise.all(
    listings.map(async (listing) => {
      const key = modelKey(listing.provider, listing.model);
      const inspection = await inspectContextWindow(listing.provider, listing.model, db);
      return adminModel(listing, inspection, overrideOf.get(key), calibrationOf.get(key));
    }),
  );
}

/**
 * Writes (or, with both numbers null, deletes) a model's override and answers its new row.
 * The window the override would give is checked first, from what the rest of the chain says
 * (the provider may be asked, seconds at most, outside any transaction), so a refused edit
 * writes nothing.
 */
export async function saveOverride(
  database: Database,
  input: OverrideInput,
  updatedBy: string,
): Promise<AdminModel> {
  const { provider, model, from, ...numbers } = input;
  requireConfiguredProvider(provider);
  const began = from === undefined ? undefined : from === null ? null : new Date(from);
  try {
    if (clearsOverride(input)) {
      if (began === undefined) await deleteOverride(database.db, provider, model);
      else if (!(await deleteOverrideIfUnchanged(database.db, provider, model, began))) {
        throw changedMeanwhile();
      }
    } else {
      // Checked against what the chain says now, not a window cached up to an hour ago.
      evictContextWindow(provider, model);
      const { chain, observed } = await inspectContextWindow(provider, model, database.db);
      const window = withOverride(input, withObservation(chain, observed));
      if (
        input.contextWindow === null &&
        input.maxOutputTokens !== null &&
        input.maxOutputTokens >= window.contextWindow
      ) {
        throw new AppError(
          "bad_request:body",
          `maxOutputTokens: must be below the model's context window (${window.contextWindow} tokens, source: ${window.source})`,
        );
      }
      const tooSmall = windowTooSmall(window);
      if (tooSmall) {
        const field = input.contextWindow === null ? "maxOutputTokens" : "contextWindow";
        throw new AppError("bad_request:body", `${field}: the resulting window ${tooSmall}`);
      }
      const row = { provider, model, ...numbers, updatedBy };
      if (began === undefined) await upsertOverride(database.db, row);
      else if (!(await replaceOverrideIfUnchanged(database.db, row, began))) {
        throw changedMeanwhile();
      }
    }
  } finally {
    evictContextWindow(provider, model);
  }
  return describeAdminModel(database.db, provider, model);
}

const changedMeanwhile = () =>
  new AppError(
    "conflict:override",
    "Another admin changed this model's override since you began; the row now shows theirs. Save again to replace it.",
  );

/** The admin row of one model, listed or not. */
export async function describeAdminModel(
  db: Db,
  provider: string,
  model: string,
): Promise<AdminModel> {
  const [models, inspection, override, calibration] = await Promise.all([
    listModels(),
    inspectContextWindow(provider, model, db),
    getOverride(db, provider, model),
    getCalibration(db, provider, model),
  ]);
  const info = models.find((m) => m.provider === provider && m.model === model);
  const listing = info ? listed(info) : unlisted(provider, model);
  return adminModel(listing, inspection, override ?? undefined, calibration ?? undefined);
}

/**
 * Forgets the window a silent cut revealed (after the server was given a larger context), so
 * the chain asks the server again from the next request.
 */
export async function forgetObservedWindow(
  db: Db,
  provider: string,
  model: string,
): Promise<AdminModel> {
  requireConfiguredProvider(provider);
  await deleteObservedWindow(db, provider, model);
  evictContextWindow(provider, model);
  return describeAdminModel(db, provider, model);
}

function requireConfiguredProvider(provider: string) {
  const info = providerRegistry().providers.find((p) => p.id === provider);
  if (!info) {
    throw new AppError("bad_request:provider", `Provider "${provider}" is not configured.`);
  }
  return info;
}

function adminModel(
  listing: Listing,
  inspection: WindowInspection,
  override: ModelOverride | undefined,
  calibration: Calibration | undefined,
): AdminModel {
  return {
    ...listing,
    ...inspection.window,
    windows: modelWindows(inspection),
    override: override
      ? {
          contextWindow: override.contextWindow,
          maxOutputTokens: override.maxOutputTokens,
          updatedAt: override.updatedAt.toISOString(),
        }
      : null,
    calibration: {
      ratio: effectiveRatio(calibration),
      samples: calibration?.samples ?? 0,
    },
  };
}

function listed(info: ModelInfo): Listing {
  const { id, provider, model, label, providerLabel } = info;
  return { id, provider, model, label, providerLabel, listed: true };
}

function unlisted(provider: string, model: string): Listing {
  const providerLabel = requireConfiguredProvider(provider).label;
  return {
    id: `${provider}:${model}`,
    provider,
    model,
    label: model,
    providerLabel,
    listed: false,
  };
}

/** Overrides of configured providers' models that no list names, so they can still be cleared. */
function unlistedOverrides(models: ModelInfo[], overrides: ModelOverride[]): Listing[] {
  const configured = new Set(providerRegistry().providers.map((p) => p.id));
  const known = new Set(models.map((m) => modelKey(m.provider, m.model)));
  return overrides
    .filter((o) => configured.has(o.provider) && !known.has(modelKey(o.provider, o.model)))
    .map((o) => unlisted(o.provider, o.model));
}

function byModel<T extends { provider: string; model: string }>(rows: T[]): Map<string, T> {
  return new Map(rows.map((row) => [modelKey(row.provider, row.model), row]));
}

function modelKey(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}
