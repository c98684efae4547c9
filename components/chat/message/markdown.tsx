"use client";

import { memo, useMemo } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import { CodeBlock } from "./code-block";
import { repairPartialMarkdown } from "./partial-markdown";

type Props = {
  text: string;
  /** While true the text is a prefix of the answer; unfinished syntax is repaired first. */
  streaming: boolean;
};

const REMARK_PLUGINS = [remarkGfm];

/** Inline code only: code inside a block is styled by CodeBlock. */
const INLINE_CODE =
  "[&_:not(pre)>code]:rounded [&_:not(pre)>code]:bg-zinc-100 [&_:not(pre)>code]:px-1 [&_:not(pre)>code]:py-0.5 [&_:not(pre)>code]:font-mono [&_:not(pre)>code]:text-[0.85em]";

/**
 * Assistant markdown. Raw HTML stays escaped (react-markdown's default) and unsafe
 * URLs are dropped by its default urlTransform. Memoized on its props, so a parent
 * re-rendering during a stream re-parses only a message whose text changed.
 */
export const Markdown = memo(function Markdown({ text, streaming }: Props) {
  const source = useMemo(() => (streaming ? repairPartialMarkdown(text) : text), [text, streaming]);
  const rendered = useMemo(
    () => (
      <ReactMarkdown remarkPlugins={REMARK_PLUGINS} components={COMPONENTS}>
        {source}
      </ReactMarkdown>
    ),
    [source],
  );
  return (
    <div
      className={`text-sm leading-relaxed break-words text-ink [&>:first-child]:mt-0 [&>:last-child]:mb-0 ${INLINE_CODE}`}
    >
      {rendered}
    </div>
  );
});

const COMPONENTS: Components = {
  p: ({ node: _node, ...props }) => <p {...props} className="my-3" />,
  h1: ({ node: _node, ...props }) => <h1 {...props} className="mt-6 mb-3 text-xl font-semibold" />,
  h2: ({ node: _node, ...props }) => <h2 {...props} className="mt-5 mb-3 text-lg font-semibold" />,
  h3: ({ node: _node, ...props }) => (
    <h3 {...props} className="mt-4 mb-2 text-base font-semibold" />
  ),
  h4: ({ node: _node, ...props }) => <h4 {...props} className="mt-4 mb-2 font-semibold" />,
  h5: ({ node: _node, ...props }) => <h5 {...props} className="mt-3 mb-2 font-semibold" />,
  h6: ({ node: _node, ...props }) => (
    <h6 {...props} className="mt-3 mb-2 font-semibold text-muted" />
  ),
  a: ({ node: _node, href, ...props }) => {
    // urlTransform empties unsafe URLs (javascript: and the like): show just the text.
    if (!href) return <span>{props.children}</span>;
    // In-page anchors (GFM footnotes) stay in the tab; everything else opens a new one.
    const external = !href.startsWith("#");
    return (
      <a
        {...props}
        href={href}
        target={external ? "_blank" : undefined}
        rel={external ? "noopener noreferrer" : undefined}
        className="text-accent underline underline-offset-2 hover:no-underline"
      />
    );
  },
  // Not loaded inline: a model-chosen image URL could carry conversation data to a third party.
  img: ({ src, alt }) =>
    typeof src === "string" && src !== "" ? (
      <a
        href={src}
        target="_blank"
        rel="noopener noreferrer"
        className="text-accent underline underline-offset-2"
      >
        {alt || src}
      </a>
    ) : null,
  ul: ({ node: _node, className, ...props }) => (
    <ul
      {...props}
      className={
        className?.includes("contains-task-list")
          ? "my-3 space-y-1"
          : "my-3 list-disc space-y-1 pl-5"
      }
    />
  ),
  ol: ({ node: _node, ...props }) => <ol {...props} className="my-3 list-decimal space-y-1 pl-5" />,
  li: ({ node: _node, ...props }) => <li {...props} className="pl-0.5 [&>ol]:my-1 [&>ul]:my-1" />,
  input: ({ node: _node, ...props }) => <input {...props} className="mr-1.5 align-middle" />,
  blockquote: ({ node: _node, ...props }) => (
    <blockquote {...props} className="my-3 border-l-2 border-line pl-3 text-zinc-600" />
  ),
  hr: ({ node: _node, ...props }) => <hr {...props} className="my-5 border-line" />,
  pre: ({ children }) => <CodeBlock>{children}</CodeBlock>,
  table: ({ node: _node, ...props }) => (
    <div className="my-3 overflow-x-auto rounded-lg border border-line">
      <table {...props} className="w-full border-collapse text-left text-sm" />
    </div>
  ),
  thead: ({ node: _node, ...props }) => <thead {...props} className="bg-panel" />,
  th: ({ node: _node, ...props }) => (
    <th {...props} className="border-b border-line px-3 py-1.5 font-medium" />
  ),
  td: ({ node: _node, ...props }) => (
    <td {...props} className="border-t border-line px-3 py-1.5 align-top" />
  ),
};
