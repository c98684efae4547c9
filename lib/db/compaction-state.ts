import { and, eq, sql } from "drizzle-orm";
import { metric } from "@/lib/log";
import type { Db } from "./client";
import { type Chat, chat } from "./schema";
import { storableText } from "./storable";

/**
 * THE writer of a chat's compaction state (DESIGN §4). No other code writes
 * `context_summary`, `summary_watermark`, `compaction_dirty` or `version`;
 * a test enforces it.
 */

export type CompactionPatch = {
  contextSummary?: string | null;
  summaryWatermark?: string | null;
  compactionDirty?: boolean;
};

export type CasResult = { won: true; chat: Chat } | { won: false; chat: Chat };

/**
 * Compare-and-swap on `version`: applies `patch` only if the row is still at
 * `expectedVersion`. Returns the new row when it won, the current row when it
 * lost. Callers decide by version, never by comparing watermarks — a watermark
 * moves backwards on an edit.
 */
export async function casCompactionState(
  db: Db,
  chatId: string,
  expectedVersion: number,
  patch: CompactionPatch,
  /** For a new summary: the history version it was built from; an edit since makes it lose. */
  expectedHistoryVersion?: number,
): Promise<CasResult | null> {
  const summary = patch.contextSummary;
  const storable =
    typeof summary === "string" ? { ...patch, contextSummary: storableText(summary) } : patch;
  const [updated] = await db
    .update(chat)
    .set({ ...storable, version: sql`${chat.version} + 1` })
    .where(
      and(
        eq(chat.id, chatId),
        eq(chat.version, expectedVersion),
        expectedHistoryVersion === undefined
          ? undefined
          : eq(chat.historyVersion, expectedHistoryVersion),
      ),
    )
    .returning();
  if (updated) return { won: true, chat: updated };
  const [current] = await db.select().from(chat).where(eq(chat.id, chatId));
  return current ? { won: false, chat: current } : null;
}

export type CommitOutcome =
  | { status: "written"; chat: Chat }
  | { status: "skipped"; reason: "covered" | "conflict"; chat: Chat };

/**
 * The conflict protocol around the CAS: a loser asks `rebase` what to do with
 * the winner's row — `"covered"` (the winner already did this work) skips,
 * a new patch retries once. A second loss skips and logs `cas.conflict`.
 * A skip never clears `compaction_dirty`: whoever wins owns that flag.
 */
export async function commitCompactionState(
  db: Db,
  input: {
    chatId: string;
    expectedVersion: number;
    patch: CompactionPatch;
    /** The history version a new summary was built from: an edit since refuses the write... */
    expectedHistoryVersion?: number;
    /**
     * ...unless this says what the summary covers is as it was (the rewrite came after it: a
     * regenerated last reply). Asked of the row that carries the newer history version.
     */
    coveredUnchanged?: (current: Chat) => Promise<boolean>;
    rebase: (current: Chat) => CompactionPatch | "covered" | Promise<CompactionPatch | "covered">;
  },
): Promise<CommitOutcome | null> {
  let history = input.expectedHistoryVersion;
  let first = await casCompactionState(
    db,
    input.chatId,
    input.expectedVersion,
    input.patch,
    history,
  );
  if (!first) return null;
  if (first.won) return { status: "written", chat: first.chat };
  // The history changed under the summary: what it covers may be text that no longer exists.
  const historyChanged = (chat: Chat): CommitOutcome => {
    metric("cas.conflict", { chatId: input.chatId, op: "history_changed" });
    return { status: "skipped", reason: "conflict", chat };
  };
  if (history !== undefined && first.chat.historyVersion !== history) {
    if (!(await input.coveredUnchanged?.(first.chat))) return historyChanged(first.chat);
    // Rewritten after what it covers: built on that history version now (a rewrite since
    // bumps it again, and the write loses).
    history = first.chat.historyVersion;
    if (first.chat.version === input.expectedVersion) {
      first = await casCompactionState(db, input.chatId, first.chat.version, input.patch, history);
      if (!first) return null;
      if (first.won) return { status: "written", chat: first.chat };
      if (first.chat.historyVersion !== history) return historyChanged(first.chat);
    }
  }

  const next = await input.rebase(first.chat);
  if (next === "covered") return { status: "skipped", reason: "covered", chat: first.chat };

  const second = await casCompactionState(db, input.chatId, first.chat.version, next, history);
  if (!second) return null;
  if (second.won) return { status: "written", chat: second.chat };
  metric("cas.conflict", { chatId: input.chatId, expectedVersion: first.chat.version });
  return { status: "skipped", reason: "conflict", chat: second.chat };
}

const MARK_DIRTY_ATTEMPTS = 5;

/**
 * Sets `compaction_dirty` (overflow, invalidation). Dirty is monotonic until a
 * compaction clears it, so a lost race is simply retried against the new row.
 */
export async function markCompactionDirty(db: Db, chatId: string): Promise<Chat | null> {
  let [current] = await db.select().from(chat).where(eq(chat.id, chatId));
  for (let attempt = 0; current && attempt < MARK_DIRTY_ATTEMPTS; attempt++) {
    if (current.compactionDirty) return current;
    const result = await casCompactionState(db, chatId, current.version, { compactionDirty: true });
    if (!result) return null;
    if (result.won) return result.chat;
    current = result.chat;
  }
  if (current) metric("cas.conflict", { chatId, op: "mark_dirty" });
  return current ?? null;
}
