import { type SQL, type SQLWrapper, sql } from "drizzle-orm";

/**
 * `column in (ids)` with the ids bound as one JSON value, not one bound value each: Postgres
 * takes at most 65,535 values in a statement, and a list of every message of a long version, or
 * of every account, passes that.
 */
export function inIdList(column: SQLWrapper, ids: readonly string[]): SQL {
  return sql`${column} in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`;
}
