"use client";

import { ArrowUp } from "lucide-react";

/** The message box. Sending arrives with streamed chat turns; until then it is shown disabled. */
export function Composer({ disabledReason }: { disabledReason: string }) {
  return (
    <div className="border-t border-line bg-white px-4 py-3">
      <div className="mx-auto flex max-w-3xl items-end gap-2 rounded-2xl border border-line bg-panel px-3 py-2">
        <textarea
          aria-label="Message"
          disabled
          rows={1}
          placeholder={disabledReason}
          className="max-h-48 min-h-9 flex-1 resize-none bg-transparent py-1.5 text-sm outline-none disabled:cursor-not-allowed"
        />
        <button
          type="button"
          disabled
          aria-label="Send message"
          className="rounded-full bg-ink p-2 text-white disabled:opacity-40"
        >
          <ArrowUp size={16} />
        </button>
      </div>
    </div>
  );
}
