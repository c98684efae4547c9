"use client";

import { memo } from "react";
import { type Components, type PluginConfig, Streamdown } from "streamdown";
import { code } from "./code-highlighter";

type Props = {
  text: string;
  /** While true the text is a prefix of the answer: Streamdown closes unfinished syntax itself. */
  streaming: boolean;
};

const NO_LINK_CHECK = { enabled: false };
/** Fenced code is highlighted by Shiki, loaded from the bundle on first use. */
const PLUGINS: PluginConfig = { code };

/**
 * Assistant Markdown, rendered by Streamdown: it parses block by block, so a streaming reply
 * re-renders only its last block, and it sanitizes raw HTML and unsafe URLs. Memoized on its
 * props, so a parent re-rendering during a stream leaves finished messages alone.
 */
export const Markdown = memo(function Markdown({ text, streaming }: Props) {
  return (
    <Streamdown
      className="fold-markdown text-sm leading-relaxed break-words text-ink [&>:first-child]:mt-0 [&>:last-child]:mb-0"
      mode={streaming ? "streaming" : "static"}
      isAnimating={streaming}
      components={COMPONENTS}
      linkSafety={NO_LINK_CHECK}
      lineNumbers={false}
      plugins={PLUGINS}
    >
      {text}
    </Streamdown>
  );
});

const COMPONENTS: Components = {
  a: ({ node: _node, href, children }) => {
    // Unsafe URLs (javascript: and the like) arrive without an href: show just the text.
    if (!href) return <span>{children}</span>;
    // In-page anchors (GFM footnotes) stay in the tab; everything else opens a new one.
    const external = !href.startsWith("#");
    return (
      <a
        href={href}
        target={external ? "_blank" : undefined}
        rel={external ? "noopener noreferrer" : undefined}
        className="text-accent underline underline-offset-2 hover:no-underline"
      >
        {children}
      </a>
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
};
