import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { env } from "@/lib/env";

const SECRET_FILE = "auth-secret";
const SECRET_BYTES = 32;

/**
 * BETTER_AUTH_SECRET when set; otherwise a random secret generated once and
 * kept in the data directory, so `npm start` works with zero setup and
 * sessions survive restarts.
 */
export function authSecret(): string {
  const configured = env().authSecret;
  if (configured) return configured;
  const dir = env().dataDir;
  const file = path.join(dir, SECRET_FILE);
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    mkdirSync(dir, { recursive: true });
    const secret = randomBytes(SECRET_BYTES).toString("base64url");
    try {
      writeFileSync(file, secret, { mode: 0o600, flag: "wx" });
      return secret;
    } catch {
      // Another process wrote it first: use theirs.
      return readFileSync(file, "utf8").trim();
    }
  }
}
