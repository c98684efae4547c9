import { getDatabase } from "@/lib/db/client";
import { pingDatabase } from "@/lib/db/migrate";
import { DATABASE_RETRY_AFTER_S, databaseUnavailable } from "@/lib/errors";
import { log } from "@/lib/log";

export const dynamic = "force-dynamic";

/** Liveness for load balancers and the browser's outage banner: 200, or 503 with Retry-After. */
export async function GET(): Promise<Response> {
  const started = performance.now();
  try {
    const database = await getDatabase();
    await pingDatabase(database);
    const latencyMs = Math.round(performance.now() - started);
    return Response.json({
      status: "ok",
      database: { ok: true, driver: database.driver, latencyMs },
    });
  } catch (error) {
    log.warn({ err: error }, "health check: database unreachable");
    const { code, message } = databaseUnavailable();
    return Response.json(
      {
        status: "error",
        database: { ok: false, error: "The database is unreachable." },
        error: { code, message },
      },
      { status: 503, headers: { "retry-after": String(DATABASE_RETRY_AFTER_S) } },
    );
  }
}
