/**
 * Reading a database error: they arrive wrapped (better-auth's APIError → Drizzle's
 * "Failed query" → the driver's own error), so the whole cause chain is read.
 */

/** How deep a cause chain is read; real ones are three or four links. */
const MAX_CHAIN = 8;

export function fieldOf(error: object, key: string): unknown {
  return (error as Record<string, unknown>)[key];
}

/** The error and its causes, outermost first (AggregateError's members included). */
export function causes(error: unknown): object[] {
  const out: object[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && out.length < MAX_CHAIN) {
    const next = queue.shift();
    if (next === null || typeof next !== "object" || out.includes(next)) continue;
    out.push(next);
    queue.push(fieldOf(next, "cause"));
    if (next instanceof AggregateError) queue.push(...next.errors);
  }
  return out;
}

/** A write refused because a row with the same key under `constraint` exists (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  return causes(error).some(
    (link) => fieldOf(link, "code") === "23505" && fieldOf(link, "constraint") === constraint,
  );
}

/**
 * A write refused because the chat it belongs to is gone: deleted while a turn or a compaction
 * on it was still running (SQLSTATE 23503 on a `chat_id` key).
 */
export function isDeletedChatReference(error: unknown): boolean {
  return causes(error).some(
    (link) =>
      fieldOf(link, "code") === "23503" &&
      String(fieldOf(link, "constraint") ?? "").endsWith("_chat_id_chat_id_fk"),
  );
}

/**
 * A write refused because the account it names is gone: the user was deleted while their
 * request (or an admin's, as the one who changed a setting) was still running (SQLSTATE 23503
 * on a `user_id` or `updated_by` key).
 */
export function isDeletedUserReference(error: unknown): boolean {
  return causes(error).some(
    (link) =>
      fieldOf(link, "code") === "23503" &&
      String(fieldOf(link, "constraint") ?? "").endsWith("_user_id_fk"),
  );
}

/**
 * A value past one of Postgres' own size limits (SQLSTATE 54000): a jsonb array over 256 MiB,
 * say. The data is stored as it was; the write that made it is refused.
 */
export function isProgramLimitExceeded(error: unknown): boolean {
  return causes(error).some((link) => fieldOf(link, "code") === "54000");
}
