import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { expect, it, vi } from "vitest";
import { DEFAULT_CHAT_TITLE } from "@/lib/chat/schemas";
import type { Db } from "@/lib/db/client";
import { casCompactionState } from "@/lib/db/compaction-state";
import { isOnlyInHiddenVersion, listBranches } from "@/lib/db/queries/branches";
import { getChat, noteTurnOnChat, updateChat } from "@/lib/db/queries/chats";
import { acquireTurnLeaseWithHistory, releaseLease } from "@/lib/db/queries/leases";
import {
  appendIfNew,
  appendIfNewAndNote,
  appendMessage,
  appendMessageInTransaction,
  loadHistory,
  loadKeyedHistory,
  loadTurnHistory,
  positionsOf,
} from "@/lib/db/queries/messages";
import { message, messageBranch } from "@/lib/db/schema";
import { prepareTurn } from "@/lib/turn/prepare";
import { describeEachDriver } from "../../helpers/databases";
import { queryRows, whileInsertsSlowed } from "../../helpers/db";
import { seedChat } from "../../helpers/fixtures";
import { eventually } from "../../helpers/ui-stream";

/** Stores user/assistant pairs m0…m(n−1) in a new chat; the chat's id. */
async function chatOf(db: Db, roles: readonly Role[]): Promise<string> {
  const chat = await seedChat(db);
  for (const [i, role] of roles.entries()) {
    await appendMessage(db, chat.id, {
      id: `${chat.id}-m${i}`,
      role,
      parts: [{ type: "text", text: `message ${i}` }],
      metadata: null,
    });
  }
  return chat.id;
}

type Role = "user" | "assistant";
/** A message's worth of different words (a few hundred characters), so none compresses away. */
const words = (seed: number) =>
  Array.from({ length: 60 }, (_, i) => ((seed + 1) * 2_654_435_761 * (i + 1)).toString(36)).join(
    " ",
  );
const alternating = (n: number): Role[] =>
  Array.from({ length: n }, (_, i) => (i % 2 === 0 ? "user" : "assistant"));
const seqs = (rows: ReadonlyArray<{ seq: number }>) => rows.map((r) => r.seq);

/**
 * What `during` read of a table: every row a scan looked at, kept or not; with `toast`, of the
 * table's TOAST table (each chunk of its out-of-line values). Postgres counts them per
 * connection until it reports them, so the count is taken before and after, in one
 * transaction (nothing is reported during one).
 */
async function rowsReadDuring<T>(
  db: Db,
  table: string,
  during: (on: Db) => Promise<T>,
  options: { toast?: boolean } = {},
): Promise<{ result: T; rows: number }> {
  const relation = options.toast
    ? sql`(select reltoastrelid from pg_class where relname = ${table} and relkind = 'r')`
    : sql`${table}::regclass`;
  const rowsRead = async (on: Db) => {
    const [counted] = await queryRows<{ n: number }>(
      on,
      sql`select coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0)::int as n
        from pg_stat_xact_all_tables where relid = ${relation}`,
    );
    return counted?.n ?? 0;
  };
  return db.transaction(async (tx) => {
    const on = tx as unknown as Db;
    const before = await rowsRead(on);
    const result = await during(on);
    return { result, rows: (await rowsRead(on)) - before };
  });
}

describeEachDriver("what a turn loads", (use) => {
  it("reads from the watermark on, not the messages the summary covers", async () => {
    const { db } = use();
    const chatId = await chatOf(db, alternating(40));
    const rows = await loadTurnHistory(db, chatId, {
      summary: "S",
      watermark: `${chatId}-m33`,
    });
    expect(seqs(rows)).toEqual([33, 34, 35, 36, 37, 38, 39]);
  });

  it("reaches back to the latest user message when the summary covers it", async () => {
    const { db } = use();
    // A long tool loop after one user message: m30 is the last user message, m35 the watermark.
    const roles: Role[] = [...alternating(30), "user", ...Array<Role>(9).fill("assistant")];
    const chatId = await chatOf(db, roles);
    const rows = await loadTurnHistory(db, chatId, {
      summary: "S",
      watermark: `${chatId}-m35`,
    });
    expect(seqs(rows)).toEqual([30, 31, 32, 33, 34, 35, 36, 37, 38, 39]);
  });

  it("reads the whole history with no summary, or a watermark that no longer exists", async () => {
    const { db } = use();
    const chatId = await chatOf(db, alternating(12));
    const all = Array.from({ length: 12 }, (_, i) => i);
    expect(seqs(await loadTurnHistory(db, chatId, { summary: null, watermark: null }))).toEqual(
      all,
    );
    expect(
      seqs(await loadTurnHistory(db, chatId, { summary: null, watermark: `${chatId}-m5` })),
    ).toEqual(all);
    expect(seqs(await loadTurnHistory(db, chatId, { summary: "S", watermark: "gone" }))).toEqual(
      all,
    );
  });
});

describeEachDriver("what a new message's turn reads with its lease", (use, driver) => {
  const read = (db: Db, userId: string, chatId: string, messageId = "incoming", whole = false) =>
    acquireTurnLeaseWithHistory(db, userId, chatId, 60_000, { messageId, whole });
  const summarize = async (db: Db, chatId: string, watermark: string) => {
    const seen = await getChat(db, chatId);
    if (!seen) throw new Error("no chat");
    const state = await casCompactionState(db, chatId, seen.version, {
      contextSummary: "S",
      summaryWatermark: watermark,
    });
    if (!state?.won) throw new Error("no summary");
  };
  /** Whether the lease statement, taken in chat `chatId` for `messageId`, reads it as new. */
  const isNewIn = async (db: Db, chatId: string, messageId: string) => {
    const userId = (await getChat(db, chatId))?.userId ?? "";
    const taken = await read(db, userId, chatId, messageId);
    if (!taken) throw new Error("lease not taken");
    await releaseLease(db, taken.lease);
    return taken.start.isNew;
  };

  it("reads the rows loadTurnHistory reads, keyed alike, with the lease taken", async () => {
    const { db } = use();
    const chatId = await chatOf(db, alternating(12));
    await db
      .update(message)
      .set({ metadata: { pinned: true } })
      .where(eq(message.id, `${chatId}-m2`));
    const userId = (await getChat(db, chatId))?.userId ?? "";
    const check = async (state: { summary: string | null; watermark: string | null }) => {
      const taken = await read(db, userId, chatId);
      if (!taken) throw new Error("lease not taken");
      expect(taken.start.rows).toEqual(await loadTurnHistory(db, chatId, state));
      expect(taken.start.isNew).toBe(true);
      expect(taken.start.current).toBe(true);
      expect(taken.chat.activeTurnUntil).toEqual(taken.lease.until);
      // Held now: a second read takes nothing.
      expect(await read(db, userId, chatId)).toBeNull();
      await releaseLease(db, taken.lease);
    };
    await check({ summary: null, watermark: null });
    await summarize(db, chatId, `${chatId}-m9`);
    await check({ summary: "S", watermark: `${chatId}-m9` });
    // Each numbered by its own place in the chat, the pinned m2 read ahead of m9 too.
    const rows = await loadTurnHistory(db, chatId, { summary: "S", watermark: `${chatId}-m9` });
    expect(rows.slice(0, 2).map((r) => r.id)).toEqual([`${chatId}-m2`, `${chatId}-m9`]);
    expect(positionsOf(rows).get(`${chatId}-m2`)).toBe(3);
    expect(positionsOf(rows).get(`${chatId}-m9`)).toBe(10);
    const whole = await read(db, userId, chatId, "incoming", true);
    expect(seqs(whole?.start.rows ?? [])).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it("reads the rows it sends through the indexes, not every stored message of the chat", async () => {
    const { db } = use();
    const stored = 600;
    const chat = await seedChat(db);
    await db.insert(message).values(
      Array.from({ length: stored }, (_, i) => ({
        id: `${chat.id}-m${i}`,
        chatId: chat.id,
        seq: i,
        role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
        parts: [{ type: "text", text: `message ${i}` }],
        metadata: i === 100 ? { pinned: true } : null,
      })),
    );
    await summarize(db, chat.id, `${chat.id}-m${stored - 20}`);
    // Planned on the table's statistics, as autovacuum keeps them for a chat this long.
    await db.execute(sql`analyze ${message}`);
    const readAlone = async (whole: boolean) => {
      const { result, rows } = await rowsReadDuring(db, "message", async (on) => {
        const taken = await read(on, chat.userId, chat.id, "incoming", whole);
        if (!taken) throw new Error("lease not taken");
        await releaseLease(on, taken.lease);
        return taken;
      });
      return { sent: result.start.rows.length, scanned: rows };
    };
    // loadTurnHistory, which the ring and a background compaction read with, alike.
    const loadAlone = async () => {
      const { result, rows } = await rowsReadDuring(db, "message", (on) =>
        loadTurnHistory(on, chat.id, { summary: "S", watermark: `${chat.id}-m${stored - 20}` }),
      );
      return { sent: result.length, scanned: rows };
    };
    const { sent, scanned } = await readAlone(false);
    // The 20 from the watermark on and the pinned m100, and a few lookups (the watermark's
    // row, the latest user message): far from the 600 stored.
    expect(sent).toBe(21);
    expect(scanned).toBeLessThan(40);
    // Asked for every row, it reads them all.
    expect((await readAlone(true)).sent).toBe(stored);
    const loaded = await loadAlone();
    expect(loaded.sent).toBe(21);
    expect(loaded.scanned).toBeLessThan(40);
  });

  it("says a message is not new when any chat stores its id, or a version of this chat holds it", async () => {
    const { db } = use();
    const chatId = await chatOf(db, alternating(2));
    const other = await chatOf(db, alternating(1));
    const isNew = (messageId: string) => isNewIn(db, chatId, messageId);
    expect(await isNew(`${chatId}-m0`)).toBe(false);
    expect(await isNew(`${other}-m0`)).toBe(false);
    await db.insert(messageBranch).values({
      chatId,
      anchorId: `${chatId}-m0`,
      position: 0,
      messages: [
        { id: "hidden-one", role: "user", parts: [], metadata: null, createdAt: "2026-01-01" },
      ],
    });
    expect(await isNew("hidden-one")).toBe(false);
    expect(await isNew("brand-new")).toBe(true);
  });

  it("tells a new message from an archived one without reading the archived messages, and another chat's turn reads none of them", async () => {
    const { db } = use();
    const chatId = await chatOf(db, alternating(2));
    const otherChatId = await chatOf(db, alternating(2));
    // A chat edited far back ten times: each version keeps 300 messages out of sight, with
    // ids as browsers make them (random).
    const ids = Array.from({ length: 10 }, () => Array.from({ length: 300 }, () => randomUUID()));
    await db.insert(messageBranch).values(
      ids.map((versionIds, version) => ({
        chatId,
        anchorId: `${chatId}-m0`,
        position: version + 1,
        messages: versionIds.map((id, i) => ({
          id,
          role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
          parts: [{ type: "text", text: `Version ${version}, message ${i}: ${words(i)}` }],
          metadata: null,
          createdAt: "2026-01-01T00:00:00.000Z",
        })),
      })),
    );
    await db.execute(sql`analyze ${messageBranch}`);
    // The archived messages are out of line (TOAST): each chunk of them read is a row read of
    // the versions table's TOAST table.
    const chunksRead = async <T>(during: (on: Db) => Promise<T>) => {
      const { result, rows } = await rowsReadDuring(db, "message_branch", during, { toast: true });
      return { result, chunks: rows };
    };
    const isNew = isNewIn;
    // What the versions hold is still found, in their chat only.
    expect(await isNew(db, chatId, ids[9]?.[299] ?? "")).toBe(false);
    expect(await isNew(db, otherChatId, ids[9]?.[299] ?? "")).toBe(true);
    expect(await isOnlyInHiddenVersion(db, chatId, ids[3]?.[5] ?? "")).toBe(true);
    expect(await isOnlyInHiddenVersion(db, otherChatId, ids[3]?.[5] ?? "")).toBe(false);
    // Reading the versions whole reads every chunk of them, their ids alone far fewer…
    const whole = await chunksRead((on) => listBranches(on, chatId));
    expect(whole.result).toHaveLength(10);
    const idsAlone = await chunksRead((on) =>
      on.execute(sql`select ${messageBranch.messageIds} from ${messageBranch}
        where ${messageBranch.chatId} = ${chatId}`),
    );
    expect(whole.chunks).toBeGreaterThan(4 * idsAlone.chunks);
    // …and a new message in their chat reads at most their ids…
    const own = await chunksRead((on) => isNew(on, chatId, "brand-new"));
    expect(own.result).toBe(true);
    expect(own.chunks).toBeLessThanOrEqual(idsAlone.chunks);
    const hidden = await chunksRead((on) => isOnlyInHiddenVersion(on, chatId, "brand-new"));
    expect(hidden.result).toBe(false);
    expect(hidden.chunks).toBeLessThanOrEqual(idsAlone.chunks);
    // …and a new message in any other chat reads none of them.
    const other = await chunksRead((on) => isNew(on, otherChatId, "brand-new"));
    expect(other.result).toBe(true);
    expect(other.chunks).toBe(0);
    const otherHidden = await chunksRead((on) =>
      isOnlyInHiddenVersion(on, otherChatId, "brand-new"),
    );
    expect(otherHidden.chunks).toBe(0);
  });

  it.runIf(driver === "pg")(
    "says its rows are of an earlier state when a compaction's commit held the chat meanwhile",
    async () => {
      const { db } = use();
      const chatId = await chatOf(db, alternating(6));
      const seen = await getChat(db, chatId);
      if (!seen) throw new Error("no chat");
      let taking: ReturnType<typeof read> | undefined;
      await db.transaction(async (tx) => {
        const state = await casCompactionState(tx as unknown as Db, chatId, seen.version, {
          contextSummary: "S",
          summaryWatermark: `${chatId}-m3`,
        });
        expect(state?.won).toBe(true);
        taking = read(db, seen.userId, chatId);
        // The statement has begun, and waits for the chat's row this commit holds.
        await eventually(async () => {
          const [waiting] = await queryRows<{ n: number }>(
            db,
            sql`select count(*)::int as n from pg_stat_activity
              where wait_event_type = 'Lock' and datname = current_database()
                and query like '%"taken"%'`,
          );
          return (waiting?.n ?? 0) > 0;
        });
      });
      const taken = await taking;
      // The lease is taken on the chat as the commit left it, the rows read from before it.
      expect(taken?.chat.summaryWatermark).toBe(`${chatId}-m3`);
      expect(taken?.start.current).toBe(false);
    },
  );

  it("takes nothing in another user's chat, or in a chat that is no chat", async () => {
    const { db } = use();
    const chatId = await chatOf(db, alternating(2));
    expect(await read(db, "someone-else", chatId)).toBeNull();
    expect(await read(db, "someone-else", "not-a-uuid")).toBeNull();
  });
});

describeEachDriver("what a turn prepares", (use) => {
  it("reads again when the rows read for the request's summary miss messages the chat's summary now leaves out", async () => {
    const { db } = use();
    const chatId = await chatOf(db, alternating(12));
    await db
      .update(message)
      .set({ metadata: { pinned: true } })
      .where(eq(message.id, `${chatId}-m2`));
    // The request saw the summary end at m9; an edit has since rolled it back to end at the
    // pinned m2, which the rows read for m9 hold too (pinned rows are always read).
    const seen = await getChat(db, chatId);
    if (!seen) throw new Error("no chat");
    const now = await casCompactionState(db, chatId, seen.version, {
      contextSummary: "S",
      summaryWatermark: `${chatId}-m2`,
    });
    expect(now?.won).toBe(true);
    const stale = { ...seen, contextSummary: "S", summaryWatermark: `${chatId}-m9` };
    const prepared = await prepareTurn(db, stale, { trigger: "continue", chatId }, "fake:model");
    expect(prepared.history.map((m) => m.id)).toEqual(
      Array.from({ length: 10 }, (_, i) => `${chatId}-m${i + 2}`),
    );
    expect(prepared.positions.get(prepared.history[0]?.id ?? "")).toBe(3);
  });

  it("holds a new message once, whether the history read beside its insert saw it or not", async () => {
    const { db, driver } = use();
    const chatId = await chatOf(db, alternating(6));
    const seen = await getChat(db, chatId);
    if (!seen) throw new Error("no chat");
    const state = await casCompactionState(db, chatId, seen.version, {
      contextSummary: "S",
      summaryWatermark: `${chatId}-m3`,
    });
    if (!state?.won) throw new Error("no summary");
    const chat = await getChat(db, chatId);
    if (!chat) throw new Error("no chat");
    const send = (id: string) =>
      prepareTurn(
        db,
        chat,
        {
          trigger: "submit-message",
          chatId,
          message: { id, role: "user", parts: [{ type: "text", text: id }] },
        },
        "fake:model",
      );
    // PGlite runs statements one after another in the order sent: the insert, then the read,
    // which sees it. On Postgres a slow insert lets the read (another connection) finish first.
    const check = async () => {
      const prepared = await send(`${chatId}-new`);
      expect(prepared.history.map((m) => m.id)).toEqual([
        `${chatId}-m3`,
        `${chatId}-m4`,
        `${chatId}-m5`,
        `${chatId}-new`,
      ]);
      expect(prepared.positions.get(prepared.history[0]?.id ?? "")).toBe(4);
    };
    if (driver === "pg") await whileInsertsSlowed(db, "message", "true", 300, check);
    else await check();
  });
});

describeEachDriver("the content key a turn reads with each message", (use) => {
  it("stays while a message is unchanged and changes when it is edited in place or pinned", async () => {
    const { db } = use();
    const chatId = await chatOf(db, alternating(4));
    const keys = async () =>
      new Map(
        (await loadTurnHistory(db, chatId, { summary: null, watermark: null })).map((row) => [
          row.id,
          row.contentKey,
        ]),
      );
    const before = await keys();
    expect(new Set(before.values()).size).toBe(4);
    expect(await keys()).toEqual(before);

    const edited = `${chatId}-m2`;
    await db
      .update(message)
      .set({ parts: [{ type: "text", text: "message 2, edited" }] })
      .where(eq(message.id, edited));
    const pinned = `${chatId}-m1`;
    await db
      .update(message)
      .set({ metadata: { pinned: true } })
      .where(eq(message.id, pinned));
    const after = await keys();
    expect(after.get(edited)).not.toBe(before.get(edited));
    expect(after.get(pinned)).not.toBe(before.get(pinned));
    expect(after.get(`${chatId}-m0`)).toBe(before.get(`${chatId}-m0`));
    expect(after.get(`${chatId}-m3`)).toBe(before.get(`${chatId}-m3`));

    // The summarized read (the pinned message, then from the watermark on) keys rows the same way.
    const fromWatermark = await loadTurnHistory(db, chatId, {
      summary: "S",
      watermark: `${chatId}-m2`,
    });
    expect(fromWatermark.map((row) => row.contentKey)).toEqual([
      after.get(pinned),
      after.get(edited),
      after.get(`${chatId}-m3`),
    ]);
  });
});

describeEachDriver("appending a message", (use) => {
  it("stores it after the last one and marks the chat as just used, in one statement", async () => {
    const { db } = use();
    const chat = await seedChat(db);
    const first = await appendMessage(db, chat.id, {
      id: `${chat.id}-a`,
      role: "user",
      parts: [{ type: "text", text: "first" }],
      metadata: null,
    });
    const before = (await getChat(db, chat.id))?.updatedAt;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await appendMessage(db, chat.id, {
      id: `${chat.id}-b`,
      role: "assistant",
      parts: [{ type: "text", text: "second" }],
      metadata: null,
    });
    expect([first.seq, second.seq]).toEqual([0, 1]);
    expect(second.createdAt).toBeInstanceOf(Date);
    expect(second.chatId).toBe(chat.id);
    const after = (await getChat(db, chat.id))?.updatedAt;
    expect(after?.getTime()).toBeGreaterThan(before?.getTime() ?? Number.POSITIVE_INFINITY);
  });
  it("notes the turn on the chat in the same statement only when the message is new", async () => {
    const { db } = use();
    const chat = await seedChat(db);
    const input = {
      id: `${chat.id}-n`,
      role: "user" as const,
      parts: [{ type: "text", text: "hello" }],
      metadata: null,
    };
    const noted = await appendIfNewAndNote(db, chat.id, input, { modelId: "fake:other" });
    expect(noted?.chat.modelId).toBe("fake:other");
    expect(noted?.chat.updatedAt.getTime()).toBeGreaterThanOrEqual(chat.updatedAt.getTime());
    const [stored] = await loadHistory(db, chat.id);
    expect(stored).toMatchObject({ id: input.id, seq: 0, role: "user", parts: input.parts });
    expect(stored?.metadata).toBeNull();
    // The message comes back as a turn's load reads it: the same row, the same content key.
    expect(noted?.message).toEqual((await loadKeyedHistory(db, chat.id))[0]);

    // The same id again: nothing is stored, the chat is left as it was.
    const again = await appendIfNewAndNote(db, chat.id, input, { modelId: "fake:third" });
    expect(again).toBeNull();
    expect(await loadHistory(db, chat.id)).toHaveLength(1);
    expect((await getChat(db, chat.id))?.modelId).toBe("fake:other");

    // No model given: the chat keeps its own; the next message takes the next place.
    const next = await appendIfNewAndNote(db, chat.id, { ...input, id: `${chat.id}-m` }, {});
    expect(next?.chat.modelId).toBe("fake:other");
    expect(next?.message.seq).toBe(1);
    expect((await loadHistory(db, chat.id)).map((m) => m.seq)).toEqual([0, 1]);
  });
  it("stores parts and metadata as JSON the database can read, and no metadata as NULL", async () => {
    const { db } = use();
    const chat = await seedChat(db);
    const text = [{ type: "text", text: "x" }];
    await appendIfNew(db, chat.id, {
      id: `${chat.id}-1`,
      role: "user",
      parts: text,
      metadata: null,
    });
    await appendIfNewAndNote(
      db,
      chat.id,
      { id: `${chat.id}-2`, role: "user", parts: text, metadata: null },
      {},
    );
    await appendMessage(db, chat.id, {
      id: `${chat.id}-3`,
      role: "assistant",
      parts: text,
      metadata: { pinned: true },
    });
    const { rows } = (await db.execute(sql`
      select jsonb_typeof(parts) as parts, metadata is null as bare, metadata->>'pinned' as pinned
      from message where chat_id = ${chat.id} order by seq`)) as unknown as {
      rows: Array<{ parts: string; bare: boolean; pinned: string | null }>;
    };
    expect(rows).toEqual([
      { parts: "array", bare: true, pinned: null },
      { parts: "array", bare: true, pinned: null },
      { parts: "array", bare: false, pinned: "true" },
    ]);
  });
  it("lets writers append to one chat at the same time: every message lands, each at its own place", async () => {
    // A turn stores its user message and reply while a background compaction stores its trace
    // entry: both take "after the last message" at once, and neither may fail or be lost.
    const { db } = use();
    const chat = await seedChat(db);
    const text = [{ type: "text", text: "x" }];
    const writers = Array.from({ length: 12 }, (_, i) => {
      const input = { id: `${chat.id}-c${i}`, role: "user" as const, parts: text, metadata: null };
      if (i % 3 === 0) return appendMessage(db, chat.id, input);
      if (i % 3 === 1) return appendIfNew(db, chat.id, input);
      return appendIfNewAndNote(db, chat.id, input, {});
    });
    const results = await Promise.allSettled(writers);
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    const stored = await loadHistory(db, chat.id);
    expect(stored.map((m) => m.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(new Set(stored.map((m) => m.id)).size).toBe(12);
  });
});

describeEachDriver("a chat's place in the list", (use, driver) => {
  // Embedded PGlite reads the app's own clock: only a server has a clock of its own.
  it.runIf(driver === "pg")(
    "moves on the database's clock, however far the app server's clock is off",
    async () => {
      // A chat's updatedAt orders the list beside createdAt, which the database sets: both must
      // come from one clock (an app server ahead or behind would misplace chats).
      const { db } = use();
      const chat = await seedChat(db);
      const input = (id: string) => ({
        id: `${chat.id}-${id}`,
        role: "user" as const,
        parts: [{ type: "text", text: id }],
        metadata: null,
      });
      vi.useFakeTimers({ toFake: ["Date"] });
      try {
        vi.setSystemTime(new Date("2040-01-01T00:00:00Z"));
        const writes: Array<() => Promise<unknown>> = [
          () => appendMessage(db, chat.id, input("a")),
          () => appendIfNewAndNote(db, chat.id, input("b"), {}),
          () => noteTurnOnChat(db, chat.id, { title: "Noted" }),
          () => updateChat(db, chat.id, { title: "Renamed" }),
        ];
        for (const write of writes) {
          await write();
          const row = await getChat(db, chat.id);
          expect(row?.updatedAt.getUTCFullYear()).toBeLessThan(2040);
          expect(row?.updatedAt.getTime()).toBeGreaterThanOrEqual(chat.createdAt.getTime());
        }
      } finally {
        vi.useRealTimers();
      }
    },
  );
});

describeEachDriver("a chat's versions", (use) => {
  it("are listed in the order the messages were first edited, each one's versions in order", async () => {
    const { db } = use();
    const chat = await seedChat(db);
    const version = (anchorId: string, position: number, createdAt: string) => ({
      chatId: chat.id,
      anchorId,
      position,
      active: false,
      messages: [],
      createdAt: new Date(createdAt),
    });
    // Anchor ids are random: the message edited first may well sort after the other.
    await db
      .insert(messageBranch)
      .values([
        version("zz-edited-first", 1, "2026-03-01T10:00:00Z"),
        version("zz-edited-first", 2, "2026-03-01T10:00:00Z"),
        version("aa-edited-later", 1, "2026-03-02T10:00:00Z"),
        version("aa-edited-later", 2, "2026-03-02T10:00:00Z"),
        version("zz-edited-first", 3, "2026-03-03T10:00:00Z"),
      ]);
    const listed = await listBranches(db, chat.id);
    expect(listed.map((v) => `${v.anchorId} ${v.position}`)).toEqual([
      "zz-edited-first 1",
      "zz-edited-first 2",
      "zz-edited-first 3",
      "aa-edited-later 1",
      "aa-edited-later 2",
    ]);
  });
});

describeEachDriver("a chat's first title", (use) => {
  it("is taken from the first message only while the chat has no title given", async () => {
    const { db } = use();
    const untitled = { title: DEFAULT_CHAT_TITLE, titled: false };
    // A rename lands between the turn's read of the chat and its write of the first title: it
    // stands, even when the user named the chat what a new chat is called.
    for (const renamed of ["Renamed", DEFAULT_CHAT_TITLE]) {
      const chat = await seedChat(db, untitled);
      await updateChat(db, chat.id, { title: renamed });
      await noteTurnOnChat(db, chat.id, { title: "From the message" });
      expect(await getChat(db, chat.id)).toMatchObject({ title: renamed, titled: true });
    }
    // With no rename in between, the turn titles the chat, once: a later turn's title does not.
    const chat = await seedChat(db, untitled);
    await noteTurnOnChat(db, chat.id, { title: "From the message" });
    expect(await getChat(db, chat.id)).toMatchObject({ title: "From the message", titled: true });
    await noteTurnOnChat(db, chat.id, { title: "From another message" });
    expect((await getChat(db, chat.id))?.title).toBe("From the message");
    // A chat made with a title of its own is never named by a turn, whatever its title reads.
    const named = await seedChat(db, { title: DEFAULT_CHAT_TITLE });
    await noteTurnOnChat(db, named.id, { title: "From the message" });
    expect((await getChat(db, named.id))?.title).toBe(DEFAULT_CHAT_TITLE);
  });
});

describeEachDriver("an append inside a transaction", (use) => {
  it("tries a place another writer took again, and the transaction goes on", async () => {
    const { db } = use();
    const chatId = await chatOf(db, alternating(2));
    // The first insert is refused as if a concurrent writer had just taken its place (a
    // sequence counts the attempts: unlike a table, it keeps counting through a rollback).
    await db.execute(sql`create sequence insert_attempts`);
    await db.execute(sql`
      create function refuse_place_once() returns trigger language plpgsql as $$
      begin
        if nextval('insert_attempts') = 1 then
          raise exception 'duplicate key value violates unique constraint "message_chat_seq_idx"'
            using errcode = 'unique_violation', constraint = 'message_chat_seq_idx';
        end if;
        return new;
      end $$`);
    await db.execute(sql`
      create trigger refuse_place_once before insert on message
      for each row execute function refuse_place_once()`);
    try {
      await db.transaction(async (txn) => {
        const tx = txn as unknown as Db;
        await appendMessageInTransaction(tx, chatId, {
          id: `${chatId}-entry`,
          role: "assistant",
          parts: [{ type: "text", text: "entry" }],
          metadata: null,
        });
        // Still usable: the refused attempt ended only its savepoint.
        await tx.execute(sql`select 1`);
      });
    } finally {
      await db.execute(sql`drop trigger refuse_place_once on message`);
      await db.execute(sql`drop function refuse_place_once()`);
      await db.execute(sql`drop sequence insert_attempts`);
    }
    expect(seqs(await loadHistory(db, chatId))).toEqual([0, 1, 2]);
  });
});
