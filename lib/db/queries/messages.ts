import { and, asc, eq, gte, max, sql } from "drizzle-orm";
import type { Db } from "../client";
import { chat, type Message, message } from "../schema";
import { storableJson } from "../storable";

export type NewMessage = Pick<Message, "id" | "role" | "parts" | "metadata">;

export async function loadHistory(db: Db, chatId: string): Promise<Message[]> {
  return db.select().from(message).where(eq(message.chatId, chatId)).orderBy(asc(message.seq));
}

/** Appends after the last message; `seq` keeps the order within the chat. */
export async function appendMessage(db: Db, chatId: string, input: NewMessage): Promise<Message> {
  const [last] = await db
    .select({ seq: max(message.seq) })
    .from(message)
    .where(eq(message.chatId, chatId));
  const [row] = await db
    .insert(message)
    .values({
      id: input.id,
      role: input.role,
      parts: storableJson(input.parts),
      metadata: storableJson(input.metadata),
      chatId,
      seq: (last?.seq ?? -1) + 1,
    })
    .returning();
  if (!row) throw new Error("insert into message returned no row");
  await db.update(chat).set({ updatedAt: new Date() }).where(eq(chat.id, chatId));
  return row;
}

/** Drops the message at `seq` and everything after it (edit and regenerate rewrite history). */
export async function truncateFrom(db: Db, chatId: string, seq: number): Promise<number> {
  const removed = await db
    .delete(message)
    .where(and(eq(message.chatId, chatId), gte(message.seq, seq)))
    .returning({ id: message.id });
  return removed.length;
}

export async function findMessage(db: Db, chatId: string, id: string): Promise<Message | null> {
  const [row] = await db
    .select()
    .from(message)
    .where(and(eq(message.chatId, chatId), eq(message.id, id)));
  return row ?? null;
}

/**
 * Takes the chat's turn lease unless another live turn holds it. The lease is
 * a timestamp, so a crashed server's lease simply runs out.
 */
export async function acquireTurnLease(db: Db, chatId: string, leaseMs: number): Promise<boolean> {
  const rows = await db
    .update(chat)
    .set({ activeTurnUntil: sql`now() + make_interval(secs => ${leaseMs / 1000})` })
    .where(
      and(
        eq(chat.id, chatId),
        sql`(${chat.activeTurnUntil} is null or ${chat.activeTurnUntil} < now())`,
      ),
    )
    .returning({ id: chat.id });
  return rows.length > 0;
}

export async function renewTurnLease(db: Db, chatId: string, leaseMs: number): Promise<void> {
  await db
    .update(chat)
    .set({ activeTurnUntil: sql`now() + make_interval(secs => ${leaseMs / 1000})` })
    .where(eq(chat.id, chatId));
}

export async function releaseTurnLease(db: Db, chatId: string): Promise<void> {
  await db.update(chat).set({ activeTurnUntil: null }).where(eq(chat.id, chatId));
}
