/**
 * Files dropped on the message box. Fold sends text, so a text file's words go into the
 * draft — fenced, under the file's name, as a reader of the message would want them — and any
 * other file is refused with a reason instead of the browser leaving the chat to show it.
 */

export type DroppedFile = { name: string; text: string } | { name: string; problem: string };

/** Whether the bytes read as a text file: valid UTF-8 without the NULs binary formats carry. */
function decodeText(bytes: Uint8Array): string | null {
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return text.includes("\u0000") ? null : text;
  } catch {
    return null;
  }
}

/**
 * Reads one dropped file, or says why it cannot go into a message. Its bytes decide, not its
 * media type (a system may call a TypeScript file video, or give a README none). `roomChars`
 * is what the message box has left: a file far longer is refused before it is read.
 */
export async function readDroppedFile(
  file: Pick<File, "name" | "size" | "arrayBuffer">,
  roomChars: number,
): Promise<DroppedFile> {
  // A character is at least one byte of UTF-8: more bytes than room may still fit (not
  // Latin text), so the limit on bytes is four times the room, and the text is checked after.
  if (file.size > Math.max(0, roomChars) * 4) {
    return { name: file.name, problem: `${file.name} is too long for a message` };
  }
  const text = decodeText(new Uint8Array(await file.arrayBuffer()));
  if (text === null) return { name: file.name, problem: `${file.name} is not a text file` };
  if (text.length > roomChars) {
    return { name: file.name, problem: `${file.name} is too long for a message` };
  }
  return { name: file.name, text };
}

/**
 * A file's text as it goes into a message: its name, then its words in a code fence longer
 * than any run of backticks inside them, so Markdown shows them exactly as written.
 */
export function fencedFile(name: string, text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  const body = text.endsWith("\n") ? text : `${text}\n`;
  return `${name}:\n${fence}\n${body}${fence}`;
}

/** Whether a drag carries files (not text or a link dragged from a page). */
export function carriesFiles(types: readonly string[]): boolean {
  return types.includes("Files");
}

/** Between what was typed and a dropped file's block, and between two blocks: a blank line. */
const BLOCK_GAP = "\n\n";

/**
 * The draft with dropped files' blocks put where the cursor was (`at`: the selection they
 * replace): a blank line on either side where text meets them. Each block is taken only while
 * the draft stays within `maxChars`, the name line, fences and blank lines counted; one that
 * does not fit is refused like a file too long. `caret` is just after the last block taken.
 */
export function dropInto(
  draft: string,
  at: { start: number; end: number },
  files: readonly DroppedFile[],
  maxChars: number,
): { text: string; caret: number; problems: string[] } {
  const before = draft.slice(0, at.start);
  const after = draft.slice(at.end);
  const lead =
    before === "" || before.endsWith(BLOCK_GAP) ? "" : before.endsWith("\n") ? "\n" : BLOCK_GAP;
  const trail =
    after === "" || after.startsWith(BLOCK_GAP) ? "" : after.startsWith("\n") ? "\n" : BLOCK_GAP;
  const problems: string[] = [];
  let blocks = "";
  for (const file of files) {
    if ("problem" in file) {
      problems.push(file.problem);
      continue;
    }
    const next = blocks
      ? `${blocks}${BLOCK_GAP}${fencedFile(file.name, file.text)}`
      : fencedFile(file.name, file.text);
    if (before.length + lead.length + next.length + trail.length + after.length > maxChars) {
      problems.push(`${file.name} is too long for a message`);
      continue;
    }
    blocks = next;
  }
  if (!blocks) return { text: draft, caret: at.end, problems };
  const head = `${before}${lead}${blocks}`;
  return { text: `${head}${trail}${after}`, caret: head.length, problems };
}
