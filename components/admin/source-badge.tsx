import type { WindowSource } from "@/lib/model-window/window";
import { SOURCE_LABELS } from "../context/ring-math";

const BADGES: Record<WindowSource, { text: string; className: string }> = {
  override: { text: "override", className: "bg-indigo-50 text-indigo-700 ring-indigo-200" },
  // The server cut a prompt: a real number, but a warning that it runs smaller than it could.
  observed: { text: "observed", className: "bg-amber-50 text-amber-800 ring-amber-200" },
  provider: { text: "provider", className: "bg-emerald-50 text-emerald-700 ring-emerald-200" },
  catalog: { text: "catalog", className: "bg-sky-50 text-sky-700 ring-sky-200" },
  // A default window is a guess: grey, and called what it is.
  default: { text: "unknown", className: "bg-zinc-100 text-zinc-500 ring-zinc-200" },
};

/** Where a model's window comes from (DESIGN §6). */
export function SourceBadge({ source, matchedId }: { source: WindowSource; matchedId?: string }) {
  const badge = BADGES[source];
  const title = matchedId ? `${SOURCE_LABELS[source]}: ${matchedId}` : SOURCE_LABELS[source];
  return (
    <span
      data-testid="window-source"
      data-source={source}
      title={title}
      className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${badge.className}`}
    >
      {badge.text}
    </span>
  );
}
