/**
 * The three windows Admin → Models shows side by side (issue 15): the one the model was
 * trained for, the one the server runs it with, and the one a silent cut revealed — each with
 * who said it, and for an observation the fix.
 */
import { z } from "zod";
import type { ObservedWindow } from "@/lib/db/queries/observed-windows";
import type { WindowInspection } from "@/lib/model-window/window";
import { describeWindow, truncationFix, windowLayers } from "@/lib/model-window/window-label";

const layer = z.object({ tokens: z.number(), from: z.string() });

export const observedLayerSchema = z.object({
  tokens: z.number(),
  /** Fold's estimate of the prompt the server cut. */
  sentTokens: z.number(),
  observedAt: z.string(),
  /** What the chain said then: the number the server did not honour. */
  believed: z.string(),
  /**
   * `in use`: the chain uses it; `overridden`: an admin override wins; `stale`: the server now
   * reports another window than the one Fold believed, so the observation no longer applies.
   */
  status: z.enum(["in use", "overridden", "stale"]),
  fix: z.string(),
});

export const modelWindowsSchema = z.object({
  /** The window in use, in words (what the ring's hover card says). */
  label: z.string(),
  trained: layer.nullable(),
  loaded: layer.nullable(),
  observed: observedLayerSchema.nullable(),
});

export type ModelWindows = z.infer<typeof modelWindowsSchema>;

export function modelWindows(inspection: WindowInspection): ModelWindows {
  const { window, chain, observed } = inspection;
  const { trained, loaded } = windowLayers(chain);
  return {
    label: describeWindow(window),
    trained,
    loaded,
    observed: observed ? observedLayer(inspection, observed) : null,
  };
}

function observedLayer(
  { window, chain }: WindowInspection,
  observed: ObservedWindow,
): ModelWindows["observed"] {
  const status =
    window.source === "observed" ? "in use" : window.source === "override" ? "overridden" : "stale";
  return {
    tokens: observed.contextWindow,
    sentTokens: observed.sentTokens,
    observedAt: observed.observedAt.toISOString(),
    believed: observed.chainSource,
    status,
    fix: truncationFix(chain.detail?.server),
  };
}
