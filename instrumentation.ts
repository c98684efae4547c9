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
  const { AppError } = await import("./lib/errors");
  // A DATABASE_URL that is no URL opens no database (lib/db/client.ts logs why), and one that
  // does not answer yet (a server still starting) opens none for now: the server still starts,
  // so that every request answers 503 and says so, and the next one opens the database. (Next
  // keeps a failed start: every request after it would be a bare 500, even once it is back.)
  const database = await getDatabase().catch((error: unknown) => {
    if (env().databaseUrlInvalid) return null;
    if (error instanceof AppError && error.code === "unavailable:database") {
      const host = unresolvedHost(error);
      log.error(
        { err: error },
        host
          ? `database host "${host}" does not resolve (a typo in DATABASE_URL, or no DNS): requests answer 503 until it does`
          : "database unreachable at start: requests answer 503 until it is back",
      );
      return null;
    }
    throw error;
  });
  if (database) log.info({ driver: database.driver }, "database ready, migrations applied");
}

/** The host name a connection failed to look up, anywhere in the error's causes, or null. */
function unresolvedHost(error: unknown): string | null {
  for (let at: unknown = error, depth = 0; at && depth < 5; depth++) {
    const { code, hostname, cause } = at as { code?: unknown; hostname?: unknown; cause?: unknown };
    if ((code === "ENOTFOUND" || code === "EAI_AGAIN") && typeof hostname === "string") {
      return hostname;
    }
    at = cause;
  }
  return null;
}
