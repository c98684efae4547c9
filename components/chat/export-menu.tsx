"use client";

import { Download } from "lucide-react";
import { DropdownMenu } from "radix-ui";
import { useRef, useState } from "react";
import { errorText } from "../memory/use-chat-memory";
import { apiFetch } from "../outage/api-fetch";
import { buttonGhost } from "../ui/styles";

const ITEMS = [
  { format: "markdown", label: "Markdown (.md)" },
  { format: "json", label: "JSON (.json)" },
] as const;

type Format = (typeof ITEMS)[number]["format"];

/**
 * Downloads the chat as a file: Markdown to read or share, JSON to keep everything. The file is
 * fetched first, so a long chat says it is being exported and a refusal (the chat gone, the
 * database down) is said here instead of being saved as the file.
 */
export function ExportMenu({ chatId }: { chatId: string }) {
  const [exporting, setExporting] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const trigger = useRef<HTMLButtonElement>(null);

  async function download(format: Format) {
    if (exporting) return;
    setExporting(true);
    setProblem(null);
    try {
      const response = await apiFetch(`/api/chats/${chatId}/export?format=${format}`);
      if (!response.ok) {
        setProblem(await errorText(response, "The chat could not be exported."));
        return;
      }
      const file = URL.createObjectURL(await response.blob());
      const link = document.createElement("a");
      link.href = file;
      link.download = fileNameOf(response) ?? `chat.${format === "json" ? "json" : "md"}`;
      document.body.append(link);
      link.click();
      link.remove();
      // The browser has the file once the click is handled.
      setTimeout(() => URL.revokeObjectURL(file), 10_000);
    } catch {
      setProblem("The chat could not be exported. Try again.");
    } finally {
      setExporting(false);
    }
  }

  return (
    <div className="relative">
      <DropdownMenu.Root>
        <DropdownMenu.Trigger asChild>
          <button
            ref={trigger}
            type="button"
            aria-busy={exporting}
            className={`${buttonGhost} px-2 py-1.5`}
          >
            <Download size={16} aria-hidden="true" />
            {exporting ? "Exporting…" : "Export"}
          </button>
        </DropdownMenu.Trigger>
        <DropdownMenu.Portal>
          <DropdownMenu.Content
            align="end"
            sideOffset={4}
            className="z-50 min-w-44 rounded-xl border border-line bg-white p-1 text-sm shadow-lg"
          >
            {ITEMS.map((item) => (
              <DropdownMenu.Item
                key={item.format}
                onSelect={() => void download(item.format)}
                className="block cursor-pointer rounded-lg px-3 py-2 outline-none hover:bg-zinc-100 focus:bg-zinc-100"
              >
                {item.label}
              </DropdownMenu.Item>
            ))}
          </DropdownMenu.Content>
        </DropdownMenu.Portal>
      </DropdownMenu.Root>
      {/* Under the button, over the chat: beside it, on a phone, it took the title's room. */}
      {problem ? (
        <div
          role="alert"
          className="absolute top-full right-0 z-40 mt-3 flex w-max max-w-[min(20rem,calc(100vw-2rem))] items-start gap-3 rounded-lg bg-red-50 px-3 py-2 text-xs text-red-700 shadow-sm"
        >
          <span>{problem}</span>
          <button
            type="button"
            onClick={() => {
              setProblem(null);
              trigger.current?.focus();
            }}
            className="font-medium"
          >
            Dismiss
          </button>
        </div>
      ) : null}
    </div>
  );
}

/** The file name the server gave in Content-Disposition: as it is, else its ASCII form. */
function fileNameOf(response: Response): string | null {
  const disposition = response.headers.get("content-disposition") ?? "";
  const named = /filename\*=UTF-8''([^;\s]+)/i.exec(disposition)?.[1];
  if (named) {
    try {
      return decodeURIComponent(named);
    } catch {
      // Not percent-encoded as it should be: the ASCII name below.
    }
  }
  return /filename="([^"]+)"/.exec(disposition)?.[1] ?? null;
}
