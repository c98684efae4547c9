import { Paperclip } from "lucide-react";

type Props = { mediaType: string; url: string; filename?: string };

/**
 * A file a model made (an image model's picture): an image is shown, anything else offered as a
 * download under its name. Only inline (data:) files: the page's CSP loads no other images, and a
 * provider's link to its own storage expires.
 */
export function FilePart({ mediaType, url, filename }: Props) {
  const name = filename ?? (mediaType.startsWith("image/") ? "Generated image" : "Generated file");
  const inline = url.startsWith("data:");
  if (inline && mediaType.startsWith("image/")) {
    return (
      // biome-ignore lint/performance/noImgElement: a data: URL, nothing for Next's loader to do
      <img
        src={url}
        alt={name}
        loading="lazy"
        className="max-h-96 max-w-full rounded-lg border border-line"
      />
    );
  }
  return (
    <p className="inline-flex items-center gap-1.5 text-sm">
      <Paperclip size={14} className="shrink-0 text-muted" />
      {inline ? (
        <a
          href={url}
          download={filename ?? true}
          className="text-accent underline underline-offset-2"
        >
          {name}
        </a>
      ) : (
        <span>{name}</span>
      )}
      <span className="text-xs text-muted">{mediaType}</span>
    </p>
  );
}
