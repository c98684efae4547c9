import pino from "pino";
import { env } from "@/lib/env";

/** JSON-lines logger; counters and timings carry a `metric` field (DESIGN §14). */
export const log = pino({
  level: env().logLevel,
  base: { app: "fold" },
  timestamp: pino.stdTimeFunctions.isoTime,
});

export function metric(name: string, fields: Record<string, unknown> = {}): void {
  log.info({ metric: name, ...fields }, name);
}
