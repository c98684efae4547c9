import type { Db } from "./client";

/**
 * The queries every turn runs, built once per database handle instead of on every call:
 * Drizzle then skips assembling the SQL, and node-postgres runs them as named prepared
 * statements on each connection. A transaction's handle gets its own (and drops them with it).
 */
const preparedByDb = new WeakMap<Db, Map<string, unknown>>();

/** `build` prepares the query under `name` (the statement's name on each connection). */
export function prepared<T>(db: Db, name: string, build: (db: Db, name: string) => T): T {
  let byName = preparedByDb.get(db);
  if (!byName) {
    byName = new Map();
    preparedByDb.set(db, byName);
  }
  let query = byName.get(name) as T | undefined;
  if (query === undefined) {
    query = build(db, name);
    byName.set(name, query);
  }
  return query;
}
