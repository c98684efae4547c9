"use client";

import {
  type DragEvent,
  type RefObject,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
} from "react";
import { carriesFiles, dropInto, readDroppedFile } from "./dropped-files";

/**
 * Files dragged over a page with a message box: dropped on the box (`form`), text files' words
 * join the draft at the cursor (dropped-files.ts); dropped anywhere else, nothing happens (a
 * browser would leave the chat to show the file). `problem` says why a file was refused.
 */
export function useFileDrop(options: {
  form: RefObject<HTMLFormElement | null>;
  area: RefObject<HTMLTextAreaElement | null>;
  text: string;
  setText: (text: string) => void;
  maxChars: number;
  disabled: boolean | undefined;
}) {
  const { form, area, text, setText, maxChars, disabled } = options;
  const [dragging, setDragging] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  // Where the cursor goes once the draft with the dropped text is on screen.
  const caret = useRef<number | null>(null);
  // The draft as it is now, after the files are read (typing may have changed it meanwhile).
  const latest = useRef(text);
  latest.current = text;

  useEffect(() => {
    const onDragOver = (event: globalThis.DragEvent) => {
      if (!event.dataTransfer || !carriesFiles([...event.dataTransfer.types])) return;
      event.preventDefault();
      if (!form.current?.contains(event.target as Node)) event.dataTransfer.dropEffect = "none";
    };
    const onDrop = (event: globalThis.DragEvent) => {
      if (event.dataTransfer && carriesFiles([...event.dataTransfer.types])) event.preventDefault();
      setDragging(false);
    };
    const onLeave = (event: globalThis.DragEvent) => {
      if (event.relatedTarget === null) setDragging(false);
    };
    window.addEventListener("dragover", onDragOver);
    window.addEventListener("drop", onDrop);
    window.addEventListener("dragleave", onLeave);
    return () => {
      window.removeEventListener("dragover", onDragOver);
      window.removeEventListener("drop", onDrop);
      window.removeEventListener("dragleave", onLeave);
    };
  }, [form]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the caret is placed once the text it belongs to is shown
  useLayoutEffect(() => {
    const el = area.current;
    if (caret.current === null || !el) return;
    el.focus();
    el.setSelectionRange(caret.current, caret.current);
    caret.current = null;
  }, [text, area]);

  function onDragOver(event: DragEvent<HTMLFormElement>) {
    if (disabled || !carriesFiles([...event.dataTransfer.types])) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
    setDragging(true);
  }

  function onDragLeave(event: DragEvent<HTMLFormElement>) {
    if (!form.current?.contains(event.relatedTarget as Node | null)) setDragging(false);
  }

  async function onDrop(event: DragEvent<HTMLFormElement>) {
    if (!carriesFiles([...event.dataTransfer.types])) return;
    event.preventDefault();
    setDragging(false);
    if (disabled) return;
    const files = [...event.dataTransfer.files];
    const el = area.current;
    const draft = text;
    const at =
      el && document.activeElement === el
        ? { start: el.selectionStart, end: el.selectionEnd }
        : { start: draft.length, end: draft.length };
    const reads = [];
    for (const file of files) reads.push(await readDroppedFile(file, maxChars - draft.length));
    const current = latest.current;
    // Typed into meanwhile (the files were being read): the blocks go at its end.
    const where = current === draft ? at : { start: current.length, end: current.length };
    const dropped = dropInto(current, where, reads, maxChars);
    if (dropped.text !== current) {
      caret.current = dropped.caret;
      setText(dropped.text);
    }
    const { problems } = dropped;
    setProblem(
      problems.length > 0
        ? `${problems.join("; ")}. Fold adds text files to your message (up to ${maxChars.toLocaleString("en-US")} characters).`
        : null,
    );
  }

  return {
    dragging,
    problem,
    clearProblem: () => setProblem(null),
    handlers: {
      onDragOver,
      onDragLeave,
      onDrop: (event: DragEvent<HTMLFormElement>) => void onDrop(event),
    },
  };
}
