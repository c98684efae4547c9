/** Colour thresholds of the context ring (DESIGN §11). */
export const AMBER_AT = 0.7;
export const RED_AT = 0.9;

export type RingTone = "unknown" | "neutral" | "amber" | "red";

/** A `default` window is a guess, so the ring stays grey rather than alarm anyone. */
export function ringTone(fill: number, source: string): RingTone {
  if (source === "default") return "unknown";
  if (fill >= RED_AT) return "red";
  if (fill >= AMBER_AT) return "amber";
  return "neutral";
}

export function ringFill(projectedTokens: number, contextWindow: number): number {
  if (contextWindow <= 0) return 0;
  return Math.min(1, Math.max(0, projectedTokens / contextWindow));
}

export const SOURCE_LABELS: Record<string, string> = {
  override: "admin override",
  observed: "observed (the server cut a prompt)",
  provider: "provider API",
  catalog: "model catalog",
  default: "window unknown (default 8,192)",
};
