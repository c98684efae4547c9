import { and, asc, eq, gte, max } from "drizzle-orm";
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
