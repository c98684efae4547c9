/**
 * Shared class lists, so buttons and inputs look the same everywhere. A primary button's focus
 * ring stands off it (the browser's own outline is lost on a near-black button).
 */
export const buttonPrimary =
  "inline-flex items-center justify-center gap-2 rounded-lg bg-ink px-4 py-2 text-sm font-medium text-white transition outline-none hover:bg-zinc-700 focus-visible:ring-2 focus-visible:ring-accent focus-visible:ring-offset-2 focus-visible:ring-offset-white disabled:cursor-not-allowed disabled:opacity-50 aria-disabled:cursor-not-allowed aria-disabled:opacity-50";
export const buttonGhost =
  "inline-flex items-center justify-center gap-2 rounded-lg px-3 py-2 text-sm text-zinc-700 transition hover:bg-zinc-100 disabled:opacity-50 aria-disabled:opacity-50";
export const inputBase =
  "w-full rounded-lg border border-line bg-white px-3 py-2 text-sm outline-none transition focus:border-zinc-400 focus:ring-2 focus:ring-zinc-200";
