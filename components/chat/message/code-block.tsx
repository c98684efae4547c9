"use client";

import { isValidElement, type ReactNode } from "react";
import { CopyButton } from "./copy-button";

/**
 * A fenced code block: react-markdown hands `<pre>` one `<code>` child whose
 * class names the language ("language-ts"); the text to copy is read from it.
 */
export function CodeBlock({ children }: { children?: ReactNode }) {
  const code = textOf(children).replace(/\n$/, "");
  const language = languageOf(children);
  return (
    <div className="my-3 overflow-hidden rounded-lg border border-line bg-panel">
      <div className="flex items-center justify-between border-b border-line py-0.5 pr-1 pl-3 text-xs text-muted">
        <span className="font-mono">{language ?? "text"}</span>
        <CopyButton text={code} label="Copy code" />
      </div>
      <pre className="overflow-x-auto px-3 py-2 font-mono text-[13px] leading-relaxed">
        {children}
      </pre>
    </div>
  );
}

function textOf(node: ReactNode): string {
  if (typeof node === "string" || typeof node === "number") return String(node);
  if (Array.isArray(node)) return node.map(textOf).join("");
  if (isValidElement<{ children?: ReactNode }>(node)) return textOf(node.props.children);
  return "";
}

function languageOf(node: ReactNode): string | null {
  if (!isValidElement<{ className?: string }>(node)) return null;
  const match = /\blanguage-(\S+)/.exec(node.props.className ?? "");
  return match?.[1] ?? null;
}
