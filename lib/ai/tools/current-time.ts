import { tool, zodSchema } from "ai";
import { z } from "zod";

/**
 * `current_time`: models do not know what time it is. Returns the instant in
 * an IANA time zone (UTC by default: the server's own zone means nothing to
 * a user somewhere else).
 */

export const DEFAULT_TIME_ZONE = "UTC";

export type CurrentTimeOptions = {
  /** The clock; injectable so tests can fix the instant. */
  now?: () => Date;
};

export const currentTimeInputSchema = z.object({
  timeZone: z
    .string()
    .max(64)
    .optional()
    .describe('IANA time zone such as "Europe/Lisbon" or "America/New_York"; defaults to UTC'),
});
/** Converted to JSON Schema on first use and kept: the AI SDK would convert a bare zod schema on every request. */
const currentTimeInputJsonSchema = zodSchema(currentTimeInputSchema);

export type CurrentTimeResult = {
  /** ISO 8601 local time in the zone with its UTC offset, e.g. 2024-03-15T13:30:00.000+01:00. */
  iso: string;
  timeZone: string;
  formatted: string;
  unixMs: number;
};

function formatterFor(timeZone: string, options: Intl.DateTimeFormatOptions) {
  try {
    return new Intl.DateTimeFormat("en-US", { ...options, timeZone });
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new Error(
      `Unknown time zone "${timeZone}". Use an IANA name such as "Europe/Lisbon", "Asia/Tokyo" or "UTC".`,
    );
  }
}

const pad = (value: number, width = 2) => String(Math.abs(value)).padStart(width, "0");

/** `date` as local wall-clock time in `timeZone`, with the zone's offset. */
function isoInZone(date: Date, timeZone: string): string {
  const parts = formatterFor(timeZone, {
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(date);
  const get = (type: Intl.DateTimeFormatPartTypes) =>
    Number(parts.find((part) => part.type === type)?.value ?? 0);
  const [year, month, day] = [get("year"), get("month"), get("day")];
  const [hour, minute, second] = [get("hour"), get("minute"), get("second")];
  const ms = date.getUTCMilliseconds();
  const wallClockAsUtc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const offsetMinutes = Math.round((wallClockAsUtc - date.getTime()) / 60_000);
  const offset =
    offsetMinutes === 0
      ? "Z"
      : `${offsetMinutes < 0 ? "-" : "+"}${pad(Math.trunc(offsetMinutes / 60))}:${pad(offsetMinutes % 60)}`;
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}.${pad(ms, 3)}${offset}`;
}

/** The current time in `timeZone`; throws a readable error for an unknown zone. */
export function currentTime(
  timeZone: string = DEFAULT_TIME_ZONE,
  now: () => Date = () => new Date(),
): CurrentTimeResult {
  const formatter = formatterFor(timeZone, { dateStyle: "full", timeStyle: "long" });
  const date = now();
  const zone = formatter.resolvedOptions().timeZone;
  return {
    iso: isoInZone(date, zone),
    timeZone: zone,
    formatted: formatter.format(date),
    unixMs: date.getTime(),
  };
}

export function createCurrentTimeTool(options: CurrentTimeOptions = {}) {
  return tool({
    description:
      "Get the current date and time, optionally in a given IANA time zone (default UTC).",
    inputSchema: currentTimeInputJsonSchema,
    execute: ({ timeZone }) => currentTime(timeZone, options.now),
  });
}
