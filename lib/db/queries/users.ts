import { count } from "drizzle-orm";
import type { Db } from "../client";
import { user } from "../schema";

export async function countUsers(db: Db): Promise<number> {
  const [row] = await db.select({ users: count() }).from(user);
  return row?.users ?? 0;
}
