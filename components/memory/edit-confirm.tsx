"use client";

import { AlertDialog } from "radix-ui";
import { countOf } from "@/lib/count-text";
import { useReturnFocus } from "../ui/return-focus";
import { buttonGhost, buttonPrimary } from "../ui/styles";

const WORDS = {
  edit: { title: "Edit this message?", action: "Edit and send" },
  regenerate: { title: "Regenerate this reply?", action: "Regenerate" },
} as const;

/** Asks before an edit or a regenerate that moves later messages to an older version. */
export function EditConfirm(props: {
  pending: { kind: "edit" | "regenerate"; laterMessages: number } | null;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { pending, onConfirm, onCancel } = props;
  const n = pending?.laterMessages ?? 0;
  const words = WORDS[pending?.kind ?? "edit"];
  // The focus goes back to where it asked from (the edit box, a Regenerate button) once that
  // is usable again (Cancel), else to the message box (sent: the button went).
  const focus = useReturnFocus();
  return (
    <AlertDialog.Root
      open={pending !== null}
      onOpenChange={(next) => (next ? undefined : onCancel())}
    >
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="fixed inset-0 z-[60] bg-black/30" />
        <AlertDialog.Content
          onOpenAutoFocus={focus.onOpenAutoFocus}
          onCloseAutoFocus={focus.onCloseAutoFocus}
          className="fixed top-1/2 left-1/2 z-[70] w-[min(90vw,26rem)] -translate-x-1/2 -translate-y-1/2 space-y-4 rounded-2xl bg-white p-6 shadow-xl"
        >
          <AlertDialog.Title className="text-base font-semibold">{words.title}</AlertDialog.Title>
          <AlertDialog.Description className="text-sm text-muted">
            This removes the {countOf(n, "message")} after it from the chat. They are kept: switch
            back to them with the ‹ › arrows under the{" "}
            {pending?.kind === "regenerate" ? "reply" : "message"}.
          </AlertDialog.Description>
          <div className="flex justify-end gap-2">
            <AlertDialog.Cancel className={buttonGhost}>Cancel</AlertDialog.Cancel>
            <AlertDialog.Action onClick={onConfirm} className={buttonPrimary}>
              {words.action}
            </AlertDialog.Action>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
