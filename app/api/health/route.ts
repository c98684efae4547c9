import { getDatabase } from "@/lib/db/client";
import { pingDatabase } from "@/lib/db/migrate";
import { log } from "@/lib/log";

export const dynamic = "force-dynamic";

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
    log.error({ err: error }, "health check: database unreachable");
    return Response.json(
      { status: "error", database: { ok: false, error: "The database is unreachable." } },
      { status: 503 },
    );
  }
}
