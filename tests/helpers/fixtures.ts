import { randomUUID } from "node:crypto";
import type { Db } from "@/lib/db/client";
import { chat, user } from "@/lib/db/schema";

/** Inserts a user and a chat directly (for tests below the HTTP layer). */
export async function seedChat(db: Db, overrides: { title?: string; titled?: boolean } = {}) {
  const userId = randomUUID();
  await db.insert(user).values({
    id: userId,
    name: "Seed",
    email: `${userId}@example.com`,
  });
  const [row] = await db
    .insert(chat)
    .values({ userId, title: overrides.title ?? "Seeded chat", titled: overrides.titled ?? true })
    .returning();
  if (!row) throw new Error("seed chat failed");
  return row;
}
