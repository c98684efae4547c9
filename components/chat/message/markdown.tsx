"use client";

import { memo } from "react";
import { type Components, defaultRehypePlugins, type PluginConfig, Streamdown } from "streamdown";
import { code } from "./code-highlighter";

type Props = {
  text: string;
  /** While true the text is a prefix of the answer: Streamdown closes unfinished syntax itself. */
  streaming: boolean;
};

const NO_LINK_CHECK = { enabled: false };
/** Fenced code is highlighted by Shiki, loaded from the bundle on first use. */
const PLUGINS: PluginConfig = { code };

/** A node of the HTML tree Streamdown renders (hast), as far as ids are concerned. */
type HtmlNode = { type: string; properties?: Record<string, unknown>; children?: HtmlNode[] };

/** The prefix the sanitizer's own ids (GFM footnotes) carry. */
const OWN_ID_PREFIX = "user-content-";

/**
 * Streamdown's sanitizer keeps `id` and `name` as written (it sets no clobber prefix): a reply
 * could name an element `composer` and take the skip link's target, or any id a global of the
 * page's scripts. Those are dropped; the footnotes' prefixed ids stay.
 */
function dropPlantedIds() {
  const visit = (node: HtmlNode) => {
    const properties = node.properties;
    if (properties) {
      for (const key of ["id", "name"]) {
        const value = properties[key];
        if (value !== undefined && !String(value).startsWith(OWN_ID_PREFIX)) delete properties[key];
      }
    }
    node.children?.forEach(visit);
  };
  return visit;
}

/** Streamdown's own (raw HTML, sanitize, harden), then the planted ids out. */
const REHYPE_PLUGINS = [...Object.values(defaultRehypePlugins), dropPlantedIds];

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
      // Each block reads in the direction most of its letters take (Arabic and Hebrew right to
      // left, punctuation on their side); code stays left to right.
      dir="auto"
      isAnimating={streaming}
      components={COMPONENTS}
      linkSafety={NO_LINK_CHECK}
      lineNumbers={false}
      plugins={PLUGINS}
      rehypePlugins={REHYPE_PLUGINS}
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
