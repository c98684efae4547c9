"use client";

import { AlertDialog } from "radix-ui";
import type { ChatContext } from "@/lib/chat/context";
import { formatCount } from "@/lib/count-text";
import { useReturnFocus } from "../ui/return-focus";
import { buttonGhost, buttonPrimary } from "../ui/styles";

/** Asks before a compaction that folds a large part of the window into the summary. */
export function CompactConfirm(props: {
  open: boolean;
  context: ChatContext | null;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { open, context, onConfirm, onCancel } = props;
  // Opened by state (the ring, its phone popover), not by a trigger Radix could refocus.
  const focus = useReturnFocus();
  return (
    <AlertDialog.Root open={open} onOpenChange={(next) => (next ? undefined : onCancel())}>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="fixed inset-0 z-[60] bg-black/30" />
        <AlertDialog.Content
          onOpenAutoFocus={focus.onOpenAutoFocus}
          onCloseAutoFocus={focus.onCloseAutoFocus}
          className="fixed top-1/2 left-1/2 z-[70] w-[min(90vw,26rem)] -translate-x-1/2 -translate-y-1/2 space-y-4 rounded-2xl bg-white p-6 shadow-xl"
        >
          <AlertDialog.Title className="text-base font-semibold">
            Compact this chat now?
          </AlertDialog.Title>
          <AlertDialog.Description className="text-sm text-muted">
            {context ? (
              <>
                About {formatCount(Math.max(0, context.projectedTokens - context.budget.target))}{" "}
                tokens of older turns will be folded into a summary.
              </>
            ) : (
              <>
                Fold cannot tell right now how full this chat is, so not how much will be folded:
                older turns will be folded into a summary.
              </>
            )}{" "}
            Every message stays in the chat; the model will see the summary instead of the older
            turns.
          </AlertDialog.Description>
          <div className="flex justify-end gap-2">
            <AlertDialog.Cancel className={buttonGhost}>Cancel</AlertDialog.Cancel>
            <AlertDialog.Action onClick={onConfirm} className={buttonPrimary}>
              Compact
            </AlertDialog.Action>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
