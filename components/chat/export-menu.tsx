"use client";

import { Download } from "lucide-react";
import { DropdownMenu } from "radix-ui";
import { buttonGhost } from "../ui/styles";

const ITEMS = [
  { format: "markdown", label: "Markdown (.md)" },
  { format: "json", label: "JSON (.json)" },
] as const;

/** Downloads the chat as a file: Markdown to read or share, JSON to keep everything. */
export function ExportMenu({ chatId }: { chatId: string }) {
  return (
    <DropdownMenu.Root>
      <DropdownMenu.Trigger asChild>
        <button type="button" className={`${buttonGhost} px-2 py-1.5`}>
          <Download size={16} aria-hidden="true" />
          Export
        </button>
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content
          align="end"
          sideOffset={4}
          className="z-50 min-w-44 rounded-xl border border-line bg-white p-1 text-sm shadow-lg"
        >
          {ITEMS.map((item) => (
            <DropdownMenu.Item key={item.format} asChild>
              <a
                href={`/api/chats/${chatId}/export?format=${item.format}`}
                download
                className="block cursor-pointer rounded-lg px-3 py-2 outline-none hover:bg-zinc-100 focus:bg-zinc-100"
              >
                {item.label}
              </a>
            </DropdownMenu.Item>
          ))}
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}
