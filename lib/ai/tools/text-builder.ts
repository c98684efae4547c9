/**
 * Output side of html-to-text: where spaces and line breaks go. Kept apart
 * from the converter so the spacing rules live in one place.
 */

/** HTML's whitespace plus the no-break space, which a reader of plain text takes as a space. */
export const HTML_WHITESPACE = /[ \t\n\f\r\u00a0]+/g;

/**
 * Accumulates output in chunks (joining once at the end keeps long pages
 * linear) and owns the spacing rules: collapsed inline whitespace, and at
 * most one blank line between blocks.
 */
export class TextBuilder {
  private readonly parts: string[] = [];
  private last = "";
  private pendingBreaks = 0;
  private pendingSpace = false;
  /** True right after a bullet or heading mark, so the block that follows does not break the line. */
  private afterMarker = false;

  inline(text: string): void {
    const collapsed = text.replace(HTML_WHITESPACE, " ");
    const trimmed = collapsed.trim();
    if (!trimmed) {
      if (collapsed) this.pendingSpace = true;
      return;
    }
    this.write(trimmed, collapsed.startsWith(" "));
    this.pendingSpace = collapsed.endsWith(" ");
  }

  /** Preformatted text, kept as written. */
  raw(text: string): void {
    if (text) this.write(text, false);
  }

  /** Text the converter adds: bullets, heading marks, cell separators. */
  marker(text: string, spaceBefore = false): void {
    this.write(text, spaceBefore);
    this.afterMarker = true;
  }

  /** A block starts: break the line, unless it directly follows a bullet (`<li><p>`). */
  block(lines: 1 | 2): void {
    if (!this.afterMarker) this.end(lines);
  }

  /** A block ends: always break the line, even after an empty bullet. */
  end(lines: 1 | 2): void {
    this.afterMarker = false;
    if (this.parts.length === 0) return;
    this.pendingBreaks = Math.max(this.pendingBreaks, lines);
    this.pendingSpace = false;
  }

  lineBreak(): void {
    if (this.parts.length === 0) return;
    this.pendingBreaks = Math.min(this.pendingBreaks + 1, 2);
    this.pendingSpace = false;
    this.afterMarker = false;
  }

  /** Appends right after the last text, e.g. a link's ` (url)`. */
  append(text: string): void {
    this.parts.push(text);
    this.last = text.at(-1) ?? this.last;
  }

  mark(): number {
    return this.parts.length;
  }

  slice(start: number, end?: number): string {
    return this.parts.slice(start, end).join("");
  }

  private write(text: string, spaceBefore: boolean): void {
    if (this.pendingBreaks > 0) this.parts.push("\n".repeat(this.pendingBreaks));
    else if (
      (spaceBefore || this.pendingSpace) &&
      this.last &&
      !/\s/.test(this.last + text.charAt(0))
    )
      this.parts.push(" ");
    this.parts.push(text);
    this.last = text.at(-1) ?? this.last;
    this.pendingBreaks = 0;
    this.pendingSpace = false;
    this.afterMarker = false;
  }
}

/** Trailing spaces off every line, at most one blank line in a row. */
export function tidy(text: string): string {
  return text
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
