// Runs once when the server starts: open the database and apply migrations,
// so the first request does not pay for it and a broken database fails loudly.
export async function register(): Promise<void> {
  // NEXT_RUNTIME is set by Next itself, not configuration; the edge runtime has no database.
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // Before any request is served: rate limits key on the socket's address (lib/limits).
  const { installPeerAddressStamp } = await import("./lib/limits/peer-address");
  installPeerAddressStamp();
  // Parse the environment now, so every repaired or replaced knob is reported once, at start.
  const { env } = await import("./lib/env");
  env();
  const { getDatabase } = await import("./lib/db/client");
  const { log } = await import("./lib/log");
  // A DATABASE_URL that is no URL opens no database (lib/db/client.ts logs why): the server
  // still starts, so that every request answers 503 and says so, instead of failing here.
  const database = await getDatabase().catch((error: unknown) => {
    if (env().databaseUrlInvalid) return null;
    throw error;
  });
  if (database) log.info({ driver: database.driver }, "database ready, migrations applied");
}
