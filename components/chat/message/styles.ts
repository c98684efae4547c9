/** The small square icon button of the message toolbar and code blocks. */
export const iconButton =
  "inline-flex items-center justify-center rounded-md p-1.5 text-zinc-500 transition hover:bg-zinc-100 hover:text-ink focus-visible:ring-2 focus-visible:ring-zinc-300 focus-visible:outline-none disabled:opacity-50";
