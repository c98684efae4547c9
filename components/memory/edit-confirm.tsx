"use client";

import { AlertDialog } from "radix-ui";
import { buttonGhost, buttonPrimary } from "../ui/styles";

/** Asks before an edit that moves later messages to an older version of the chat. */
export function EditConfirm(props: {
  laterMessages: number | null;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { laterMessages, onConfirm, onCancel } = props;
  const n = laterMessages ?? 0;
  return (
    <AlertDialog.Root
      open={laterMessages !== null}
      onOpenChange={(next) => (next ? undefined : onCancel())}
    >
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="fixed inset-0 bg-black/30" />
        <AlertDialog.Content className="fixed top-1/2 left-1/2 w-[min(90vw,26rem)] -translate-x-1/2 -translate-y-1/2 space-y-4 rounded-2xl bg-white p-6 shadow-xl">
          <AlertDialog.Title className="text-base font-semibold">
            Edit this message?
          </AlertDialog.Title>
          <AlertDialog.Description className="text-sm text-muted">
            This removes the {n} {n === 1 ? "message" : "messages"} after it from the chat. They are
            kept: switch back to them with the ‹ › arrows under the message.
          </AlertDialog.Description>
          <div className="flex justify-end gap-2">
            <AlertDialog.Cancel className={buttonGhost}>Cancel</AlertDialog.Cancel>
            <AlertDialog.Action onClick={onConfirm} className={buttonPrimary}>
              Edit and send
            </AlertDialog.Action>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
